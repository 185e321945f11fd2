#include "common/sse.h"

namespace warden::sse {

std::string data_frame(std::string_view payload) {
  std::string out;
  out.reserve(payload.size() + 8);
  std::size_t start = 0;
  while (true) {
    const std::size_t nl = payload.find('\n', start);
    out += "data: ";
    out.append(payload.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start));
    out += '\n';
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  out += '\n';
  return out;
}

std::string comment_frame(std::string_view text) {
  std::string out = ": ";
  for (char c : text) out += (c == '\n' || c == '\r') ? ' ' : c;
  out += "\n\n";
  return out;
}

std::vector<event> parser::feed(std::string_view bytes) {
  std::vector<event> out;
  if (failed_) return out;
  for (char c : bytes) {
    if (c == '\n' && last_was_cr_) { last_was_cr_ = false; continue; }  // \r\n: \r ended it
    last_was_cr_ = (c == '\r');
    if (c == '\n' || c == '\r') {
      on_line(line_, out);
      line_.clear();
      if (failed_) return out;
      continue;
    }
    line_ += c;
    if (line_.size() + current_.data.size() > max_event_bytes_) { failed_ = true; return out; }
  }
  return out;
}

void parser::on_line(std::string_view line, std::vector<event>& out) {
  if (line.empty()) {
    if (!current_.id.empty()) last_id_ = current_.id;
    if (has_data_) out.push_back(std::move(current_));
    current_ = event{};
    has_data_ = false;
    return;
  }
  if (line.front() == ':') return;  // comment
  const std::size_t colon = line.find(':');
  std::string_view field = line.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? std::string_view{} : line.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (field == "data") {
    if (has_data_) current_.data += '\n';
    current_.data.append(value);
    has_data_ = true;
  } else if (field == "event") {
    current_.name = std::string(value);
  } else if (field == "id") {
    current_.id = std::string(value);
  }
  // retry: is not used; ignored.
}

}  // namespace warden::sse
