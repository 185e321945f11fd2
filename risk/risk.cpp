#include "risk/risk.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "risk/risk_detail.h"

namespace warden::risk {

namespace risk_detail {

void findings::add(std::string reason, reason_kind kind) {
  if (kind == reason_kind::hazard) hazard = true;
  if (std::find(reasons.begin(), reasons.end(), reason) == reasons.end()) reasons.push_back(std::move(reason));
}

std::string shorten(std::string_view word) {
  std::string out;
  for (const char c : word.substr(0, 60)) out += c == '\0' ? '?' : c;
  if (word.size() > 60) out += "...";
  return out;
}

namespace {

/// Pieces of a word split at / = : , (so --file=../x and a:b/../c yield their components).
std::vector<std::string_view> components(std::string_view word) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= word.size(); ++i) {
    if (i == word.size() || word[i] == '/' || word[i] == '=' || word[i] == ':' || word[i] == ',') {
      if (i > start) out.push_back(word.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

bool under(std::string_view path, std::string_view dir) {
  return path == dir || (path.starts_with(dir) && path[dir.size()] == '/');
}

/// /proc/<anything>/environ and /proc/<anything>/mem.
bool proc_secret(std::string_view word) {
  const std::size_t proc = word.find("/proc/");
  if (proc == std::string_view::npos) return false;
  const std::string_view rest = word.substr(proc + 6);
  for (const std::string_view leaf : {std::string_view("/environ"), std::string_view("/mem")}) {
    const std::size_t at = rest.find(leaf);
    if (at != std::string_view::npos && (at + leaf.size() == rest.size() || rest[at + leaf.size()] == '/')) return true;
  }
  return rest.starts_with("kcore") || rest.starts_with("sysrq-trigger");
}

bool raw_device(std::string_view word) {
  const std::size_t dev = word.find("/dev/");
  if (dev == std::string_view::npos) return false;
  const std::string_view rest = word.substr(dev + 5);
  static constexpr std::array<std::string_view, 10> disks = {"sd", "nvme", "hd", "vd", "xvd", "mmcblk", "disk", "mem", "kmem", "port"};
  return std::any_of(disks.begin(), disks.end(), [&](std::string_view d) { return rest.starts_with(d); });
}

/// Repeated slashes and /./ components collapsed (/etc//passwd → /etc/passwd, a/./b → a/b).
std::string squeeze(std::string_view word) {
  std::string out;
  for (std::size_t i = 0; i < word.size(); ++i) {
    if (word[i] == '/' && !out.empty() && out.back() == '/') continue;
    if (word[i] == '.' && !out.empty() && out.back() == '/' && (i + 1 == word.size() || word[i + 1] == '/')) {
      if (i + 1 < word.size()) ++i;  // drop "./"
      continue;
    }
    out += word[i];
  }
  return out;
}

}  // namespace

std::optional<std::string> sensitive_path(std::string_view original) {
  const std::string squeezed = squeeze(original);
  const std::string_view word = squeezed;
  static constexpr std::array<std::string_view, 8> fixed = {
      "/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/passwd", "/etc/master.passwd",
      ".aws/credentials", ".docker/config.json", ".kube/config"};
  const bool fixed_hit = std::any_of(fixed.begin(), fixed.end(), [&](std::string_view f) { return word.find(f) != std::string_view::npos; });
  if (fixed_hit || proc_secret(word) || raw_device(word)) return "touches a sensitive path (" + shorten(word) + ")";
  static constexpr std::array<std::string_view, 6> names = {".ssh", ".gnupg", ".netrc", ".git-credentials", ".pgpass", ".aws"};
  for (const std::string_view c : components(word)) {
    if (c == "..") return "escapes the workspace with .. (" + shorten(word) + ")";
    if (std::find(names.begin(), names.end(), c) != names.end()) return "touches a sensitive path (" + shorten(word) + ")";
  }
  std::size_t start = 0;
  while (start <= word.size()) {  // /boot as a whole path or the value of key=/boot/…
    const std::size_t end = std::min(word.find_first_of("=:", start), word.size());
    if (under(word.substr(start, end - start), "/boot")) return "touches a sensitive path (" + shorten(word) + ")";
    start = end + 1;
  }
  return std::nullopt;
}

bool outside_writable(std::string_view original) {
  const std::string squeezed = squeeze(original);
  const std::string_view path = squeezed;
  if (path.starts_with("~")) return true;
  if (!path.starts_with("/")) return false;
  if (path == "/dev/null" || path == "/dev/stdout" || path == "/dev/stderr" || path == "/dev/tty") return false;
  if (path.starts_with("/dev/fd/")) return false;
  return !under(path, "/workspace") && !under(path, "/tmp");
}

}  // namespace risk_detail

namespace {

using risk_detail::findings;

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '$'; }

/// Whether the text at `at` starts a URL that leaves the page: http(s)/ws(s)/ftp or //host.
bool remote_url_at(std::string_view s, std::size_t at) {
  while (at < s.size() && (s[at] == ' ' || s[at] == '\t' || s[at] == '\n' || s[at] == '"' || s[at] == '\'' || s[at] == '`')) ++at;
  const std::string_view rest = s.substr(at);
  for (const std::string_view scheme : {"http:", "https:", "ws:", "wss:", "ftp:", "//", "\\\\"})
    if (rest.starts_with(scheme)) return true;
  return false;
}

/// Whether the tag that contains position `at` is <a …> (a link only a click follows).
bool inside_anchor_tag(std::string_view s, std::size_t at) {
  const std::size_t open = s.rfind('<', at);
  if (open == std::string_view::npos || s.find('>', open) < at) return false;
  return s.substr(open + 1, 2) == "a " || s.substr(open + 1, 2) == "a\t" || s.substr(open + 1, 2) == "a\n";
}

/// Network APIs: called (fetch(, window.open() or named (the others).
void html_apis(std::string_view s, findings& out) {
  struct api { std::string_view name; bool call; };
  static constexpr std::array<api, 9> apis = {{
      {"fetch", true}, {"xmlhttprequest", false}, {"websocket", false}, {"eventsource", false},
      {"sendbeacon", false}, {"rtcpeerconnection", false}, {"importscripts", true},
      {"webtransport", false}, {"window.open", true}}};
  for (const api& a : apis) {
    for (std::size_t at = s.find(a.name); at != std::string_view::npos; at = s.find(a.name, at + 1)) {
      std::size_t k = at + a.name.size();
      if ((at > 0 && ident_char(s[at - 1])) || (k < s.size() && ident_char(s[k]))) continue;
      while (a.call && k < s.size() && (s[k] == ' ' || s[k] == '\t' || s[k] == '\n')) ++k;
      if (a.call && (k >= s.size() || s[k] != '(')) continue;
      out.add("reaches the network (" + std::string(a.name) + ")");
      break;
    }
  }
}

/// src=/href=/action=/url(…)/import(…)/@import/from "…" pointing at a remote URL.
void html_urls(std::string_view s, findings& out) {
  static constexpr std::array<std::string_view, 12> attrs = {
      "src", "href", "action", "formaction", "srcset", "poster", "data", "background", "codebase", "ping", "manifest", "url"};
  for (const std::string_view attr : attrs) {
    for (std::size_t at = s.find(attr); at != std::string_view::npos; at = s.find(attr, at + 1)) {
      if (at > 0 && (ident_char(s[at - 1]) || s[at - 1] == '-')) continue;
      std::size_t k = at + attr.size();
      while (k < s.size() && (s[k] == ' ' || s[k] == '\t' || s[k] == '\n')) ++k;
      if (k >= s.size() || s[k] != '=' || !remote_url_at(s, k + 1)) continue;
      if (attr == "href" && inside_anchor_tag(s, at)) continue;
      out.add("loads a remote resource (" + std::string(attr) + "=)");
    }
  }
  struct opener { std::string_view text, label; };
  static constexpr std::array<opener, 4> openers = {{{"url(", "url()"}, {"import(", "import()"}, {"@import", "@import"}, {"from ", "import from"}}};
  for (const auto& [call, label] : openers) {
    for (std::size_t at = s.find(call); at != std::string_view::npos; at = s.find(call, at + 1)) {
      std::size_t k = at + call.size();
      if (call == "@import" && s.substr(k).find_first_not_of(" \t") != std::string_view::npos) {
        k = s.find_first_not_of(" \t", k);
        if (s.substr(k, 4) == "url(") k += 4;
      }
      if (call == "from " && (k >= s.size() || (s[k] != '"' && s[k] != '\''))) continue;  // prose "from https://…"
      if (remote_url_at(s, k)) out.add("loads a remote resource (" + std::string(label) + ")");
    }
  }
}

/// The bodies of <script> elements and on…= attribute values (lower-cased input).
std::vector<std::string_view> script_parts(std::string_view s) {
  std::vector<std::string_view> out;
  for (std::size_t at = s.find("<script"); at != std::string_view::npos; at = s.find("<script", at + 1)) {
    const std::size_t open_end = s.find('>', at);
    if (open_end == std::string_view::npos) break;
    const std::size_t close = s.find("</script", open_end);
    out.push_back(s.substr(open_end + 1, (close == std::string_view::npos ? s.size() : close) - open_end - 1));
  }
  for (std::size_t at = s.find(" on"); at != std::string_view::npos; at = s.find(" on", at + 1)) {
    std::size_t k = at + 3;
    while (k < s.size() && std::isalpha(static_cast<unsigned char>(s[k]))) ++k;
    if (k >= s.size() || s[k] != '=') continue;
    const char q = k + 1 < s.size() ? s[k + 1] : ' ';
    const std::size_t end = (q == '"' || q == '\'') ? s.find(q, k + 2) : s.find_first_of(" >", k + 1);
    out.push_back(s.substr(k + 1, (end == std::string_view::npos ? s.size() : end) - k - 1));
  }
  return out;
}

/// innerHTML/outerHTML given anything but one string literal.
bool computed_markup(std::string_view part) {
  for (const std::string_view prop : {std::string_view("innerhtml"), std::string_view("outerhtml")}) {
    for (std::size_t at = part.find(prop); at != std::string_view::npos; at = part.find(prop, at + 1)) {
      std::size_t k = part.find_first_not_of(" \t", at + prop.size());
      if (k == std::string_view::npos || part[k] != '=' || part.substr(k, 2) == "==") return true;
      k = part.find_first_not_of(" \t\n", k + 1);
      if (k == std::string_view::npos || (part[k] != '"' && part[k] != '\'')) return true;
      const std::size_t close = part.find(part[k], k + 1);
      if (close == std::string_view::npos) return true;
      const std::size_t rest = part.find_first_not_of(" \t", close + 1);
      if (rest != std::string_view::npos && part[rest] != ';' && part[rest] != '\n') return true;
    }
  }
  return false;
}

/// Script that navigates, spawns workers, writes markup, builds property names or names a URL.
void html_scripts(std::string_view s, findings& out) {
  static constexpr std::array<std::string_view, 17> markers = {
      "location", "window.open(", "new worker(", "sharedworker(", "importscripts(", ".src=", ".src =", ".href=", ".href =",
      "insertadjacenthtml", "document.write", "window[", "navigator[", "document[", "http://", "https://", "//"};
  for (const std::string_view part : script_parts(s)) {
    if (computed_markup(part)) out.add("script builds markup at run time (innerHTML)");
    for (const std::string_view m : markers) {
      if (part.find(m) == std::string_view::npos) continue;
      out.add("script can navigate, load or build markup (" + std::string(m) + ")");
      break;
    }
  }
}

risk_assessment verdict(findings f) {
  risk_assessment r;
  r.level = f.reasons.empty() ? risk_level::low : risk_level::high;
  r.reasons = std::move(f.reasons);
  r.hazard = f.hazard;
  return r;
}

risk_assessment high(std::string reason) { return {risk_level::high, {std::move(reason)}, true}; }

/// The string argument `name`, or nullptr when it is missing or not a string.
const std::string* string_arg(const json& args, const char* name) {
  const auto it = args.find(name);
  return it != args.end() && it->is_string() ? it->get_ptr<const std::string*>() : nullptr;
}

}  // namespace

const char* to_string(risk_level level) noexcept {
  switch (level) {
    case risk_level::low: return "low";
    case risk_level::high: return "high";
  }
  return "high";
}

namespace {

/// A read-only network tool (web_search): only an explicit, non-empty "url" fetches.
risk_assessment network_read(const json& args) {
  const auto url = args.find("url");
  if (url == args.end() || url->is_null() || (url->is_string() && url->get_ref<const std::string&>().empty()))
    return {risk_level::low, {}};
  return high("fetches a URL");
}

void check_code(code_language code, const std::string& text, findings& f) {
  switch (code) {
    case code_language::shell: risk_detail::check_shell(text, f, 0); return;
    case code_language::python: risk_detail::check_python(text, f, 0); return;
    case code_language::html: {
      const std::string s = lower(text);
      html_apis(s, f);
      html_urls(s, f);
      html_scripts(s, f);
      return;
    }
    case code_language::none: f.add("unknown tool"); return;
  }
}

}  // namespace

risk_assessment classify_call(const tool_profile& tool, const json& args) {
  const bool has_code = tool.code != code_language::none;
  if (!has_code && tool.read_only && !tool.reads_network) return {risk_level::low, {}};
  if (!has_code && tool.writes_files) return high(std::string(tool.name) + " always asks");
  if (!has_code && !tool.read_only) return high("unknown tool");
  if (!args.is_object()) return high("the arguments are not an object");
  if (!has_code) return network_read(args);
  const std::string arg_name(tool.code_argument);
  const std::string* text = string_arg(args, arg_name.c_str());
  if (text == nullptr) return high("the " + arg_name + " argument is missing or not a string");
  findings f;
  check_code(tool.code, *text, f);
  return verdict(std::move(f));
}

}  // namespace warden::risk
