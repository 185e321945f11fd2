#include "client/kb_command.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "client/chat_client.h"
#include "client/command_support.h"
#include "common/json_util.h"
#include "common/secret_file.h"

namespace warden::client {

namespace {

constexpr long k_upload_timeout_ms = 30L * 60 * 1000;  // a large PDF is read, chunked and embedded

std::string base64(const std::string& bytes) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) | (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                       static_cast<unsigned char>(bytes[i + 2]);
    for (int s : {18, 12, 6, 0}) out += k[(v >> s) & 63];
  }
  if (i < bytes.size()) {
    unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += k[(v >> 18) & 63];
    out += k[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? k[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::optional<std::string> find_key(const kb_options& o) { return find_api_key(o.api_key, o.api_key_file, "warden kb"); }
std::optional<json> answer(const http_reply& r) { return reply_json(r, "warden kb"); }

int list(const http_api& api, const kb_options& o) {
  const bool docs = !o.args.empty();
  auto j = answer(api.get(docs ? "/api/kb/" + o.args[0] + "/documents" : std::string("/api/kb")));
  if (!j) return 1;
  for (const auto& x : (*j)["data"]) {
    if (docs) {
      std::printf("%s  %-8s %6lld chunks  %s\n", x.value("id", "").c_str(), x.value("kind", "").c_str(),
                  static_cast<long long>(x.value("chunks", 0)), x.value("name", "").c_str());
    } else {
      std::printf("%s  %4lld documents  %s\n", x.value("id", "").c_str(), static_cast<long long>(x.value("documents", 0)),
                  x.value("name", "").c_str());
    }
  }
  if ((*j)["data"].empty()) std::printf(docs ? "(no documents)\n" : "(no knowledge bases: warden kb create NAME)\n");
  return 0;
}

int add(const kb_options& o, const std::string& key) {
  if (o.args.empty() || (o.args.size() == 1 && o.fetch_url.empty())) {
    std::fprintf(stderr, "warden kb add: give the knowledge base and one or more files (or --fetch URL)\n");
    return 2;
  }
  const http_api api(o.url, key, 5000, k_upload_timeout_ms);
  std::vector<json> bodies;
  if (!o.fetch_url.empty()) bodies.push_back({{"url", o.fetch_url}});
  for (std::size_t i = 1; i < o.args.size(); ++i) {
    std::ifstream f(o.args[i], std::ios::binary);
    if (!f) {
      std::fprintf(stderr, "warden kb add: cannot read %s\n", o.args[i].c_str());
      return 2;
    }
    std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const auto slash = o.args[i].find_last_of('/');
    bodies.push_back({{"name", slash == std::string::npos ? o.args[i] : o.args[i].substr(slash + 1)},
                      {"content_base64", base64(bytes)}});
  }
  for (const auto& b : bodies) {
    auto j = answer(api.post_json("/api/kb/" + o.args[0] + "/documents", b));
    if (!j) return 1;
    const long long n = j->value("chunks", 0);
    std::printf("added %s  %s: %lld chunk%s%s\n", j->value("id", "").c_str(), j->value("name", "").c_str(), n,
                n == 1 ? "" : "s", j->value("embedded", false) ? "" : " (not embedded: words only)");
  }
  return 0;
}

/// `text` with every line after the first indented like the first.
std::string indented(std::string text) {
  for (std::size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 4)) text.insert(at + 1, "   ");
  return text;
}

int search(const http_api& api, const kb_options& o) {
  if (o.args.size() < 2) {
    std::fprintf(stderr, "warden kb search: give the knowledge base and a query\n");
    return 2;
  }
  std::string q;
  for (std::size_t i = 1; i < o.args.size(); ++i) q += (i > 1 ? " " : "") + o.args[i];
  auto j = answer(api.post_json("/api/kb/" + o.args[0] + "/search", json{{"query", q}}));
  if (!j) return 1;
  int n = 0;
  for (const auto& h : (*j)["data"]) {
    std::printf("%d. %s (chunk %lld, score %.3g)\n   %s\n", ++n, h.value("document_name", "").c_str(),
                static_cast<long long>(h.value("chunk", 0)), h.value("score", 0.0),
                indented(h.value("text", "").substr(0, 300)).c_str());
  }
  if (n == 0) std::printf("(nothing found)\n");
  return 0;
}

}  // namespace

int run_kb(const kb_options& o) {
  auto key = find_key(o);
  if (!key) return 2;
  global_init();
  const http_api api(o.url, *key);
  if (o.action == "list") return list(api, o);
  if (o.action == "add") return add(o, *key);
  if (o.action == "search") return search(api, o);
  if (o.action == "create") {
    if (o.args.size() != 1) {
      std::fprintf(stderr, "warden kb create: give one name\n");
      return 2;
    }
    auto j = answer(api.post_json("/api/kb", json{{"name", o.args[0]}}));
    if (!j) return 1;
    std::printf("%s\n", j->value("id", "").c_str());
    return 0;
  }
  if (o.action == "rm" && (o.args.size() == 1 || o.args.size() == 2)) {
    const std::string path = "/api/kb/" + o.args[0] + (o.args.size() == 2 ? "/documents/" + o.args[1] : "");
    if (!answer(api.del(path))) return 1;
    std::printf("deleted %s\n", o.args.back().c_str());
    return 0;
  }
  std::fprintf(stderr, "warden kb: use list [KB], create NAME, add KB FILE... [--fetch URL], rm KB [DOC], search KB QUERY\n");
  return 2;
}

}  // namespace warden::client
