#include "tools/web_fetch.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <set>

#include "common/text.h"
#include "common/utf8.h"
#include "tools/net_guard.h"

namespace warden::tools {

namespace {

constexpr std::size_t k_max_url_bytes = 2048;
constexpr std::size_t k_max_message = 300;

error refuse(std::string text) {
  return make_error(errc::invalid_request, std::string(utf8_prefix(to_valid_utf8(text), k_max_message)));
}
error failed(std::string text) {
  return make_error(errc::upstream_error, std::string(utf8_prefix(to_valid_utf8(text), k_max_message)));
}

struct curl_url_deleter {
  void operator()(CURLU* u) const { curl_url_cleanup(u); }
};
struct curl_easy_deleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct curl_slist_deleter {
  void operator()(curl_slist* s) const { curl_slist_free_all(s); }
};

/// A part of `u`, or "" when absent.
std::string url_part(CURLU* u, CURLUPart what, unsigned flags = 0) {
  char* p = nullptr;
  if (curl_url_get(u, what, &p, flags) != CURLUE_OK || p == nullptr) return {};
  std::string s(p);
  curl_free(p);
  return s;
}

bool is_ascii_host(std::string_view h) {
  return std::all_of(h.begin(), h.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

/// The literal address `host` is, normalised by inet_pton/ntop; nullopt for a name.
std::optional<std::string> literal_address(const std::string& host) {
  unsigned char buf[16];
  char text[INET6_ADDRSTRLEN];
  if (inet_pton(AF_INET, host.c_str(), buf) == 1) return inet_ntop(AF_INET, buf, text, sizeof text);
  if (inet_pton(AF_INET6, host.c_str(), buf) == 1) return inet_ntop(AF_INET6, buf, text, sizeof text);
  return std::nullopt;
}

/// The text of a socket address (no brackets, no port); "" for other families.
std::string address_text(const sockaddr* sa) {
  char text[INET6_ADDRSTRLEN] = {0};
  if (sa->sa_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, text, sizeof text);
  } else if (sa->sa_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, text, sizeof text);
  }
  return text;
}

/// Whether `address` is one of this machine's interface addresses.
bool is_own_address(const std::string& address) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return true;  // unknown: treat as ours (refuse)
  bool found = false;
  for (ifaddrs* i = list; i != nullptr && !found; i = i->ifa_next) {
    if (i->ifa_addr != nullptr && address_text(i->ifa_addr) == address) found = true;
  }
  freeifaddrs(list);
  return found;
}

/// The transfer's state, shared with libcurl's callbacks.
struct transfer {
  const fetch_options* opts = nullptr;
  CURL* handle = nullptr;
  std::optional<bool> pdf;        ///< known at the first body bytes
  std::set<std::string> allowed;  ///< the checked addresses a socket may be opened to
  std::string body;
  bool too_large = false;
  bool refused_socket = false;
};

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
  auto* t = static_cast<transfer*>(user);
  const std::size_t bytes = size * n;
  if (!t->pdf) {
    char* ct = nullptr;
    curl_easy_getinfo(t->handle, CURLINFO_CONTENT_TYPE, &ct);
    t->pdf = ct != nullptr && ascii_lower(ct).rfind("application/pdf", 0) == 0;
  }
  const std::size_t cap = *t->pdf ? t->opts->max_pdf_bytes : t->opts->max_bytes;
  const std::size_t room = cap - std::min(cap, t->body.size());
  if (bytes > room) {
    t->body.append(data, room);
    t->too_large = true;
    return 0;  // stops the transfer (CURLE_WRITE_ERROR)
  }
  t->body.append(data, bytes);
  return bytes;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<transfer*>(user);
  return t->opts->cancelled && t->opts->cancelled() ? 1 : 0;
}

curl_socket_t on_open_socket(void* user, curlsocktype, curl_sockaddr* a) {
  auto* t = static_cast<transfer*>(user);
  if (t->allowed.count(address_text(&a->addr)) == 0) {
    t->refused_socket = true;
    return CURL_SOCKET_BAD;
  }
  return ::socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

/// "host:port:addr1,addr2" for CURLOPT_RESOLVE (IPv6 addresses in brackets).
std::string resolve_entry(const url_parts& p, const std::vector<std::string>& addrs) {
  std::string e = p.host + ":" + std::to_string(p.port) + ":";
  for (std::size_t i = 0; i < addrs.size(); ++i) {
    if (i > 0) e += ",";
    e += addrs[i].find(':') != std::string::npos ? "[" + addrs[i] + "]" : addrs[i];
  }
  return e;
}

/// The addresses the hop may connect to, every one checked; the refusal otherwise.
result<std::vector<std::string>> checked_addresses(const url_parts& p, const fetch_options& o) {
  std::vector<std::string> addrs;
  if (auto lit = literal_address(p.host)) {
    addrs.push_back(*lit);
  } else {
    auto r = o.resolve(p.host);
    if (!r) return failed("Could not resolve " + p.host + ": " + r.error().message);
    addrs = std::move(*r);
  }
  if (addrs.empty()) return failed("Could not resolve " + p.host + ": no addresses");
  const int own = o.own_port ? o.own_port->load() : 0;
  for (const auto& a : addrs) {
    if (auto why = address_refusal(a, p.port, o.allow_private, own)) {
      const bool own = why->starts_with("warden's own");
      return refuse("Refused to fetch " + p.host + ": it resolves to " + *why +
                    (own ? ", which is never fetched." : ". Only public internet addresses are fetched unless the server "
                                                          "runs with --allow-private-fetch."));
    }
  }
  return addrs;
}

void split_content_type(const char* raw, fetched& f) {
  if (raw == nullptr) return;
  std::string ct = ascii_lower(raw);
  auto semi = ct.find(';');
  f.content_type = std::string(trim(std::string_view(ct).substr(0, semi)));
  if (semi == std::string::npos) return;
  auto cs = ct.find("charset=", semi);
  if (cs == std::string::npos) return;
  std::string v = ct.substr(cs + 8);
  v = v.substr(0, v.find(';'));
  v.erase(std::remove(v.begin(), v.end(), '"'), v.end());
  f.charset = std::string(trim(v));
}

error transfer_error(CURLcode code, const transfer& t, const url_parts& p, const fetch_options& o) {
  if (t.too_large) return failed("The PDF at " + p.host + " is larger than " + std::to_string(o.max_pdf_bytes >> 20) + " MiB.");
  if (t.refused_socket) return refuse("Refused to connect to " + p.host + ": an address that was not checked.");
  if (code == CURLE_ABORTED_BY_CALLBACK) return make_error(errc::cancelled, "The fetch was cancelled.");
  if (code == CURLE_OPERATION_TIMEDOUT) {
    return failed("Fetching " + p.host + " timed out after " +
                  std::to_string((o.timeout.count() + 999) / 1000) + " s.");
  }
  return failed("Could not fetch " + p.host + ": " + curl_easy_strerror(code) + ".");
}

void set_options(CURL* c, transfer& t, const url_parts& p, curl_slist* pins, long timeout_ms) {
  curl_easy_setopt(c, CURLOPT_URL, p.url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(c, CURLOPT_PROXY, "");
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, std::max(1L, timeout_ms));
  curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
  curl_easy_setopt(c, CURLOPT_USERAGENT, t.opts->user_agent.c_str());
  if (pins != nullptr) curl_easy_setopt(c, CURLOPT_RESOLVE, pins);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &t);
  curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, on_open_socket);
  curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, &t);
}

/// One hop: the response, or the redirect's next URL in `next`.
result<fetched> fetch_hop(const url_parts& p, const fetch_options& o, long timeout_ms, std::string& next) {
  auto addrs = checked_addresses(p, o);
  if (!addrs) return std::move(addrs).error();
  transfer t;
  t.opts = &o;
  t.allowed.insert(addrs->begin(), addrs->end());
  std::unique_ptr<curl_slist, curl_slist_deleter> pins;
  if (!literal_address(p.host)) pins.reset(curl_slist_append(nullptr, resolve_entry(p, *addrs).c_str()));
  std::unique_ptr<CURL, curl_easy_deleter> c(curl_easy_init());
  if (!c) return failed("Could not start a transfer (libcurl).");
  t.handle = c.get();
  set_options(c.get(), t, p, pins.get(), timeout_ms);
  const CURLcode code = curl_easy_perform(c.get());
  const bool cut = code == CURLE_WRITE_ERROR && t.too_large && !t.pdf.value_or(false);
  if (code != CURLE_OK && !cut) return transfer_error(code, t, p, o);
  fetched f;
  f.url = p.url;
  f.host = p.host;
  curl_easy_getinfo(c.get(), CURLINFO_RESPONSE_CODE, &f.status);
  if (f.status >= 300 && f.status < 400) {
    char* location = nullptr;
    curl_easy_getinfo(c.get(), CURLINFO_REDIRECT_URL, &location);
    if (location == nullptr || *location == '\0') {
      return failed("The page at " + p.host + " answered " + std::to_string(f.status) + " without a Location.");
    }
    next = location;
    return f;
  }
  char* ct = nullptr;
  curl_easy_getinfo(c.get(), CURLINFO_CONTENT_TYPE, &ct);
  split_content_type(ct, f);
  f.body = std::move(t.body);
  f.truncated = cut;
  return f;
}

}  // namespace

result<std::vector<std::string>> resolve_system(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (rc != 0) return make_error(errc::upstream_error, gai_strerror(rc));
  std::vector<std::string> out;
  for (addrinfo* a = res; a != nullptr; a = a->ai_next) {
    std::string text = address_text(a->ai_addr);
    if (!text.empty() && std::find(out.begin(), out.end(), text) == out.end()) out.push_back(std::move(text));
  }
  freeaddrinfo(res);
  return out;
}

std::optional<std::string> address_refusal(const std::string& address, int port, bool allow_private, int own_port) {
  const auto why = non_global_reason(address);
  if (own_port > 0 && port == own_port && (why || is_own_address(address))) return "warden's own address and port";
  if (why && !allow_private) return "a non-public address (" + *why + ")";
  return std::nullopt;
}

result<url_parts> parse_url(std::string_view url, std::string_view base) {
  if (url.size() > k_max_url_bytes) return refuse("The URL is longer than 2048 bytes.");
  std::unique_ptr<CURLU, curl_url_deleter> u(curl_url());
  if (!base.empty() && curl_url_set(u.get(), CURLUPART_URL, std::string(base).c_str(), 0) != CURLUE_OK) {
    return refuse("Not a valid URL: " + std::string(base));
  }
  if (curl_url_set(u.get(), CURLUPART_URL, std::string(url).c_str(), 0) != CURLUE_OK) {
    return refuse("Not a valid http(s) URL: " + std::string(url));
  }
  url_parts p;
  p.scheme = ascii_lower(url_part(u.get(), CURLUPART_SCHEME));
  if (p.scheme != "http" && p.scheme != "https") return refuse("Only http and https URLs can be fetched.");
  if (!url_part(u.get(), CURLUPART_USER).empty() || !url_part(u.get(), CURLUPART_PASSWORD).empty()) {
    return refuse("URLs with a user name or password are not fetched.");
  }
  if (!url_part(u.get(), CURLUPART_ZONEID).empty()) return refuse("URLs with an IPv6 zone are not fetched.");
  std::string host = ascii_lower(url_part(u.get(), CURLUPART_HOST));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.empty()) return refuse("The URL has no host.");
  // the host lower-cased in the URL too (curl keeps a name's case)
  if (host != url_part(u.get(), CURLUPART_HOST) && host.find(':') == std::string::npos) {
    curl_url_set(u.get(), CURLUPART_HOST, host.c_str(), 0);
  }
  if (!is_ascii_host(host)) return refuse("Write the host name in its ASCII (xn--) form.");
  p.host = std::move(host);
  const std::string port = url_part(u.get(), CURLUPART_PORT, CURLU_DEFAULT_PORT);
  p.port = port.empty() ? 0 : std::atoi(port.c_str());
  p.url = url_part(u.get(), CURLUPART_URL);
  if (p.url.size() > k_max_url_bytes) return refuse("The URL is longer than 2048 bytes.");
  return p;
}

result<fetched> fetch_url(const std::string& url, const fetch_options& o) {
  const auto deadline = std::chrono::steady_clock::now() + o.timeout;
  std::string current = url, base;
  for (int hop = 0; hop <= k_max_redirects; ++hop) {
    auto p = parse_url(current, base);
    if (!p) return std::move(p).error();
    if (o.policy != nullptr) {
      if (auto why = o.policy->refusal(p->host)) return refuse(*why);
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return failed("Fetching " + p->host + " timed out after " + std::to_string((o.timeout.count() + 999) / 1000) + " s.");
    }
    std::string next;
    auto f = fetch_hop(*p, o, static_cast<long>(left.count()), next);
    if (!f || next.empty()) return f;
    base = p->url;
    current = std::move(next);
  }
  return failed("Too many redirects (more than " + std::to_string(k_max_redirects) + ") from " + url + ".");
}

std::optional<std::string> normalise_domain(std::string_view entry) {
  std::string d = ascii_lower(trim(entry));
  if (d.rfind("*.", 0) == 0) d.erase(0, 2);
  while (!d.empty() && d.front() == '.') d.erase(0, 1);
  while (!d.empty() && d.back() == '.') d.pop_back();
  if (d.size() >= 2 && d.front() == '[' && d.back() == ']') d = d.substr(1, d.size() - 2);
  if (d.empty() || d.size() > 253 || !is_ascii_host(d)) return std::nullopt;
  if (literal_address(d)) return d;
  for (char c : d) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_')) return std::nullopt;
  }
  return d;
}

namespace {

/// The forms a literal address is judged by: its normalised text, and for an IPv4-mapped
/// (::ffff:0:0/96) or NAT64 (64:ff9b::/96) IPv6 address also the IPv4 address it carries; empty
/// for a name.
std::vector<std::string> address_forms(const std::string& host) {
  std::vector<std::string> out;
  auto lit = literal_address(host);
  if (!lit) return out;
  out.push_back(*lit);
  unsigned char b[16];
  if (inet_pton(AF_INET6, lit->c_str(), b) != 1) return out;
  static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
  if (std::equal(b, b + 12, mapped) || std::equal(b, b + 12, nat64)) {
    char text[INET_ADDRSTRLEN];
    if (inet_ntop(AF_INET, b + 12, text, sizeof text) != nullptr) out.emplace_back(text);
  }
  return out;
}

}  // namespace

std::optional<std::string> website_policy::refusal(std::string_view host) const {
  if (empty()) return std::nullopt;
  std::string h = ascii_lower(host);
  while (!h.empty() && h.back() == '.') h.pop_back();  // "example.com." is example.com
  const auto forms = address_forms(h);
  auto covers = [&](const std::string& d) {
    const auto entry = address_forms(d);
    if (!forms.empty() || !entry.empty()) {  // addresses match as addresses, in any of their forms
      return std::any_of(forms.begin(), forms.end(),
                         [&](const std::string& f) { return std::find(entry.begin(), entry.end(), f) != entry.end(); });
    }
    return h == d || (h.size() > d.size() && h.compare(h.size() - d.size(), d.size(), d) == 0 &&
                      h[h.size() - d.size() - 1] == '.');
  };
  if (!is_ascii_host(h)) return "The website access limits of this chat do not allow " + std::string(host) + ".";
  for (const auto& d : blocked_domains) {
    if (covers(d)) return "The website access limits of this chat block " + h + ".";
  }
  if (!allowed_domains.empty() && std::none_of(allowed_domains.begin(), allowed_domains.end(), covers)) {
    return "The website access limits of this chat do not allow " + h + ".";
  }
  return std::nullopt;
}

}  // namespace warden::tools
