// `warden chat`, the keyboard: Ctrl-C as a flag the chat loop can wait on, and line editing
// with history through libedit (histedit.h).
//
// interrupts: install() puts a SIGINT handler in place (no SA_RESTART) that counts presses and
// writes a byte to a self-pipe, so a thread blocked in poll() wakes at once. take() returns
// how many presses came since the last take() and drains the pipe. The handler only touches an
// atomic and write(2): async-signal-safe.
//
// line_editor: libedit in emacs mode on the terminal (stdin/stdout), history loaded from and
// saved to `history_path` (created 0600, its folder created when missing; a history that
// cannot be read or written is only a missing convenience, never an error). read_line() shows
// `prompt` and returns the line, or `eof` (Ctrl-D on an empty line, stdin closed), or
// `interrupted` (Ctrl-C: the partly typed line is dropped). Characters are read by a function
// of ours that polls stdin and the interrupt pipe, so Ctrl-C ends a read at once.
// libedit keeps the terminal in its own mode only while read_line() runs.
//
// Thread-safety: interrupts is process-wide (take() from one thread); line_editor is used from
// one thread only.
#pragma once

#include <memory>
#include <string>

namespace warden::client {

namespace interrupts {
/// Installs the SIGINT (and SIGWINCH) handlers; idempotent.
void install();
/// Presses since the last take(); drains the wake-up pipe.
int take();
/// True when a press is waiting (does not consume it).
bool pending();
/// The read end of the wake-up pipe (readable while a press is pending); -1 before install().
int wake_fd();
}  // namespace interrupts

class line_editor {
 public:
  enum class status { line, eof, interrupted };
  struct input {
    status st = status::eof;
    std::string text;         ///< the line (status::line)
    bool had_text = false;    ///< status::interrupted: something was typed on the line
  };

  /// `program` names the libedit configuration section (~/.editrc); `history_path` "" = no file.
  line_editor(const char* program, std::string history_path);
  ~line_editor();
  line_editor(const line_editor&) = delete;
  line_editor& operator=(const line_editor&) = delete;

  /// Reads one line with `prompt` (may hold ANSI colour codes, each run of them between \1
  /// markers). A non-empty line is added to the history (and the file) when `remember` is true.
  /// A Ctrl-C press that ends the read is consumed (interrupts::take()).
  input read_line(const std::string& prompt, bool remember);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// $WARDEN_HOME/chat_history, else ~/.cache/warden/chat_history; "" when neither is known.
std::string default_history_path();

}  // namespace warden::client
