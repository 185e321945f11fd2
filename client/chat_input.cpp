#include "client/chat_input.h"

#include <fcntl.h>
#include <histedit.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cwchar>
#include <filesystem>
#include <mutex>
#include <system_error>

namespace warden::client {

namespace interrupts {
namespace {

std::atomic<int> g_presses{0};
std::atomic<bool> g_resized{false};
int g_pipe[2] = {-1, -1};

void on_sigint(int) {
  const int saved = errno;
  g_presses.fetch_add(1);
  if (g_pipe[1] >= 0) {
    const char byte = 1;
    [[maybe_unused]] const ssize_t n = ::write(g_pipe[1], &byte, 1);
  }
  errno = saved;
}

void on_sigwinch(int) { g_resized = true; }

void drain() {
  char buf[64];
  while (g_pipe[0] >= 0 && ::read(g_pipe[0], buf, sizeof buf) > 0) {
  }
}

}  // namespace

void install() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (::pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) g_pipe[0] = g_pipe[1] = -1;
    struct sigaction sa {};
    sa.sa_handler = &on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: a blocked read or poll returns EINTR
    sigaction(SIGINT, &sa, nullptr);
    sa.sa_handler = &on_sigwinch;
    sigaction(SIGWINCH, &sa, nullptr);
  });
}

int take() {
  drain();
  return g_presses.exchange(0);
}

bool pending() { return g_presses.load() > 0; }

int wake_fd() { return g_pipe[0]; }

bool take_resized() { return g_resized.exchange(false); }

}  // namespace interrupts

namespace {

/// The line as libedit returns it, without its newline.
std::string chomp(const char* line, int count) {
  std::string s(line, count > 0 ? static_cast<std::size_t>(count) : 0);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

}  // namespace

struct line_editor::impl {
  EditLine* el = nullptr;
  History* hist = nullptr;
  HistEvent ev{};
  std::string history_path;
  std::string prompt;
  std::mbstate_t mb{};
  bool had_text = false;  ///< the line was not empty when Ctrl-C ended the read

  static char* prompt_of(EditLine* el) {
    void* data = nullptr;
    el_get(el, EL_CLIENTDATA, &data);
    return const_cast<char*>(static_cast<impl*>(data)->prompt.c_str());
  }

  /// libedit's character source: one character from stdin, or -1 when Ctrl-C was pressed
  /// (libedit then ends the line), 0 at end of input.
  static int read_char(EditLine* el, wchar_t* out) {
    void* data = nullptr;
    el_get(el, EL_CLIENTDATA, &data);
    auto* self = static_cast<impl*>(data);
    auto interrupted = [&] {
      const LineInfoW* li = el_wline(el);
      self->had_text = li != nullptr && li->lastchar != li->buffer;
      return -1;
    };
    for (;;) {
      if (interrupts::pending()) return interrupted();
      if (interrupts::take_resized()) el_resize(el);
      pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {interrupts::wake_fd(), POLLIN, 0}};
      const int r = ::poll(fds, fds[1].fd >= 0 ? 2 : 1, -1);
      if (r < 0) {
        if (errno == EINTR) continue;
        return -1;
      }
      if (fds[1].fd >= 0 && (fds[1].revents & POLLIN) != 0) return interrupted();
      if (fds[0].revents == 0) continue;
      char byte = 0;
      const ssize_t n = ::read(STDIN_FILENO, &byte, 1);
      if (n == 0) return 0;
      if (n < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        return -1;
      }
      wchar_t wc = 0;
      const std::size_t used = std::mbrtowc(&wc, &byte, 1, &self->mb);
      if (used == static_cast<std::size_t>(-2)) continue;  // a multi-byte character goes on
      if (used == static_cast<std::size_t>(-1)) {
        self->mb = std::mbstate_t{};
        wc = static_cast<unsigned char>(byte);
      }
      *out = wc;
      return 1;
    }
  }
};

line_editor::line_editor(const char* program, std::string history_path) : impl_(std::make_unique<impl>()) {
  interrupts::install();
  impl& d = *impl_;
  d.history_path = std::move(history_path);
  d.hist = history_init();
  history(d.hist, &d.ev, H_SETSIZE, 1000);
  history(d.hist, &d.ev, H_SETUNIQUE, 1);
  if (!d.history_path.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(d.history_path).parent_path(), ec);
    const int fd = ::open(d.history_path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);  // 0600 before libedit writes
    if (fd >= 0) ::close(fd);
    history(d.hist, &d.ev, H_LOAD, d.history_path.c_str());
  }
  d.el = el_init(program, stdin, stdout, stderr);
  el_set(d.el, EL_CLIENTDATA, &d);
  el_set(d.el, EL_SIGNAL, 0);
  el_set(d.el, EL_EDITOR, "emacs");
  el_set(d.el, EL_PROMPT_ESC, &impl::prompt_of, '\1');
  el_set(d.el, EL_HIST, history, d.hist);
  el_set(d.el, EL_GETCFN, &impl::read_char);
  el_source(d.el, nullptr);
}

line_editor::~line_editor() {
  if (impl_->el != nullptr) el_end(impl_->el);
  if (impl_->hist != nullptr) history_end(impl_->hist);
}

line_editor::input line_editor::read_line(const std::string& prompt, bool remember) {
  impl& d = *impl_;
  d.prompt = prompt;
  d.mb = std::mbstate_t{};
  d.had_text = false;
  int count = 0;
  const char* line = el_gets(d.el, &count);
  if (interrupts::take() > 0) {
    std::fputs("^C\n", stdout);
    std::fflush(stdout);
    return {status::interrupted, "", d.had_text};
  }
  if (line == nullptr || count <= 0) return {status::eof, ""};
  input in{status::line, chomp(line, count)};
  if (remember && !in.text.empty()) {
    history(d.hist, &d.ev, H_ENTER, in.text.c_str());
    if (!d.history_path.empty()) history(d.hist, &d.ev, H_SAVE, d.history_path.c_str());
  }
  return in;
}

std::string default_history_path() {
  if (const char* home = std::getenv("WARDEN_HOME"); home != nullptr && *home != '\0') {
    return (std::filesystem::path(home) / "chat_history").string();
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return (std::filesystem::path(home) / ".cache" / "warden" / "chat_history").string();
  }
  return "";
}

}  // namespace warden::client
