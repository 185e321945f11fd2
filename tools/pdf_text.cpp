#include "tools/pdf_text.h"

#include <fcntl.h>
#include <linux/filter.h>
#include <poll.h>
#include <seccomp.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <poppler/cpp/poppler-document.h>
#include <poppler/cpp/poppler-global.h>
#include <poppler/cpp/poppler-page.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

#include "common/utf8.h"

#if defined(__SANITIZE_ADDRESS__)
#define WARDEN_PDF_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WARDEN_PDF_ASAN 1
#endif
#endif

namespace warden::tools {
namespace {

using clock = std::chrono::steady_clock;

constexpr int k_pipe_fd = 3;   // the child's output: a pipe to the parent
constexpr int k_input_fd = 4;  // the child's input: a memfd holding the PDF (mapped read-only)
/// The child is this program started again with this variable set (pdf_child_entry below).
constexpr const char* k_child_env = "WARDEN_PDF_CHILD";

/// How the child ends (its exit status); a signal means it was killed.
enum child_exit : int { exit_ok = 0, exit_unreadable = 10, exit_encrypted = 11, exit_setup_failed = 12 };

// ---- the seccomp allow-list ---------------------------------------------------------------

/// The child's seccomp filter as a BPF program, built by libseccomp in the child before it
/// reads the untrusted bytes.
result<std::string> build_filter() {
  std::unique_ptr<std::remove_pointer_t<scmp_filter_ctx>, void (*)(scmp_filter_ctx)> ctx(
      seccomp_init(SCMP_ACT_KILL_PROCESS), seccomp_release);
  if (!ctx) return make_error(errc::internal, "seccomp_init failed", {}, "pdf_sandbox");
  auto add = [&](uint32_t action, const char* name, unsigned count = 0, scmp_arg_cmp arg = {}) {
    const int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) return 0;  // not on this architecture
    return count == 0 ? seccomp_rule_add(ctx.get(), action, nr, 0) : seccomp_rule_add(ctx.get(), action, nr, 1, arg);
  };
  int rc = 0;
  // Memory (never executable: PROT_EXEC is refused), threads' futexes, time, randomness, exit.
  for (const char* name : {"munmap", "mremap", "brk", "madvise", "futex", "exit", "exit_group", "clock_gettime",
                           "gettimeofday", "getrandom", "rt_sigreturn", "rt_sigprocmask", "fstat", "newfstatat",
                           "lseek", "close", "getpid", "gettid", "sched_yield", "clock_nanosleep", "nanosleep"}) {
    rc = rc < 0 ? rc : add(SCMP_ACT_ALLOW, name);
  }
#ifdef WARDEN_PDF_ASAN
  // AddressSanitizer's runtime (test builds only) sets up alternate signal stacks as it goes.
  rc = rc < 0 ? rc : add(SCMP_ACT_ALLOW, "sigaltstack");
#endif
  for (const char* name : {"mmap", "mprotect"}) {
    rc = rc < 0 ? rc : add(SCMP_ACT_ALLOW, name, 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
  }
  // Output only to the pipe.
  rc = rc < 0 ? rc : add(SCMP_ACT_ALLOW, "write", 1, SCMP_A0(SCMP_CMP_EQ, k_pipe_fd));
  // Files: refused without killing (poppler looks for CMap and font files and copes without).
  for (const char* name : {"open", "openat", "openat2", "access", "faccessat", "faccessat2", "stat", "lstat",
                           "readlink", "readlinkat", "statx"}) {
    rc = rc < 0 ? rc : add(SCMP_ACT_ERRNO(EACCES), name);
  }
  if (rc < 0) return make_error(errc::internal, std::string("seccomp rule: ") + std::strerror(-rc), {}, "pdf_sandbox");

  const int fd = ::memfd_create("warden-pdf-seccomp", MFD_CLOEXEC);
  if (fd < 0) return make_error(errc::internal, std::string("memfd_create: ") + std::strerror(errno), {}, "pdf_sandbox");
  std::string out;
  if (rc = seccomp_export_bpf(ctx.get(), fd); rc >= 0) {
    const off_t size = ::lseek(fd, 0, SEEK_END);
    out.resize(size > 0 ? static_cast<std::size_t>(size) : 0);
    if (::pread(fd, out.data(), out.size(), 0) != static_cast<ssize_t>(out.size()) || out.empty()) rc = -EIO;
  }
  ::close(fd);
  if (rc < 0) return make_error(errc::internal, "seccomp: could not export the PDF filter", {}, "pdf_sandbox");
  return out;
}


// ---- text -----------------------------------------------------------------------------------

/// poppler's UTF-16 as UTF-8: surrogate pairs joined, lone surrogates as U+FFFD, control
/// characters other than tab and line feed dropped (a carriage return becomes a line feed).
std::string utf16_to_utf8(const poppler::ustring& s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    std::uint32_t cp = s[i];
    if (cp >= 0xD800 && cp <= 0xDBFF && i + 1 < s.size() && s[i + 1] >= 0xDC00 && s[i + 1] <= 0xDFFF) {
      cp = 0x10000 + ((cp - 0xD800) << 10) + (static_cast<std::uint32_t>(s[i + 1]) - 0xDC00);
      ++i;
    } else if (cp >= 0xD800 && cp <= 0xDFFF) {
      cp = 0xFFFD;
    }
    if (cp == '\r') cp = '\n';
    if ((cp < 0x20 && cp != '\t' && cp != '\n') || cp == 0x7F || cp == 0xFEFF) continue;
    append_utf8(out, cp);
  }
  return out;
}

/// The longest prefix of well-formed `s` of at most `cap` bytes that ends on a UTF-8 boundary.
std::size_t utf8_cut(std::string_view s, std::size_t cap) {
  if (s.size() <= cap) return s.size();
  std::size_t cut = cap;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return cut;
}

/// A one-page PDF showing `text` in Helvetica (the child's warm-up document).
std::string tiny_pdf(std::string_view text) {
  const std::string content = "BT /F1 12 Tf 20 100 Td (" + std::string(text) + ") Tj ET";
  const std::string objects[] = {
      "<< /Type /Catalog /Pages 2 0 R >>",
      "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
      "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] /Resources << /Font << /F1 4 0 R >> >> "
      "/Contents 5 0 R >>",
      "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
      "<< /Length " + std::to_string(content.size()) + " >>\nstream\n" + content + "\nendstream",
  };
  std::string pdf = "%PDF-1.4\n";
  std::string xref = "xref\n0 6\n0000000000 65535 f \n";
  int number = 1;
  for (const std::string& body : objects) {
    char entry[32];
    std::snprintf(entry, sizeof entry, "%010zu 00000 n \n", pdf.size());
    xref += entry;
    pdf += std::to_string(number++) + " 0 obj\n" + body + "\nendobj\n";
  }
  const std::size_t xref_at = pdf.size();
  return pdf + xref + "trailer\n<< /Size 6 /Root 1 0 R >>\nstartxref\n" + std::to_string(xref_at) + "\n%%EOF\n";
}

// ---- the child --------------------------------------------------------------------------------

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

/// Everything past the input fd is closed (the spawn set up 0..2 on /dev/null, 3 and 4).
void confine_fds() {
  if (::close_range(k_input_fd + 1, ~0U, 0) != 0) {
    for (int fd = k_input_fd + 1; fd < 65536; ++fd) ::close(fd);
  }
}

/// The size of this process's address space in bytes (from /proc/self/statm), 0 if unknown.
[[maybe_unused]] std::size_t address_space_bytes() {
  const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[128] = {};
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return 0;
  std::size_t pages = 0;
  for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; ++i) pages = pages * 10 + static_cast<std::size_t>(buf[i] - '0');
  return pages * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

bool limit(int resource, rlim_t soft, rlim_t hard) {
  const rlimit r{soft, hard};
  return ::setrlimit(resource, &r) == 0;
}

bool limit_and_harden(rlim_t cpu_seconds, pid_t parent) {
  bool ok = limit(RLIMIT_CORE, 0, 0) && limit(RLIMIT_FSIZE, 0, 0) && limit(RLIMIT_NOFILE, 16, 16) &&
            limit(RLIMIT_CPU, cpu_seconds, cpu_seconds + 1);
#ifndef WARDEN_PDF_ASAN
  if (const std::size_t now = address_space_bytes(); ok && now > 0) {
    ok = limit(RLIMIT_AS, now + k_pdf_address_space_bytes, now + k_pdf_address_space_bytes);
  }
#endif
  ok = ok && ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0 &&
       ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == 0;
  return ok && ::getppid() == parent;  // the parent may have died before PDEATHSIG was set
}

void ignore_poppler_message(const std::string&, void*) {}

/// Runs poppler once on a harmless document, so that its global state (GlobalParams with the
/// poppler-data tables it reads from /usr/share/poppler, the text extractor's first allocations)
/// exists before the filter forbids opening files. poppler-cpp frees that state when its last
/// document goes, so the caller keeps the returned one alive.
std::unique_ptr<poppler::document> warm_up(const std::string& sample) {
  poppler::set_debug_error_function(ignore_poppler_message, nullptr);
  std::unique_ptr<poppler::document> doc(
      poppler::document::load_from_raw_data(sample.data(), static_cast<int>(sample.size())));
  if (!doc) return doc;
  std::unique_ptr<poppler::page> page(doc->create_page(0));
  if (page) (void)page->text(poppler::rectf(), poppler::page::non_raw_non_physical_layout);
  return doc;
}

bool install_filter(const std::string& bpf) {
  sock_fprog prog{};
  prog.len = static_cast<unsigned short>(bpf.size() / sizeof(sock_filter));
  prog.filter = reinterpret_cast<sock_filter*>(const_cast<char*>(bpf.data()));
  return ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == 0;
}

/// Loads the untrusted bytes and writes the text to the pipe; returns the exit status.
int extract(std::string_view pdf, int max_pages, std::size_t max_bytes) {
  std::unique_ptr<poppler::document> doc(
      poppler::document::load_from_raw_data(pdf.data(), static_cast<int>(pdf.size())));
  if (!doc) return exit_unreadable;
  if (doc->is_locked()) return exit_encrypted;
  const int pages = std::min(doc->pages(), max_pages);
  std::size_t written = 0;
  for (int i = 0; i < pages && written < max_bytes; ++i) {
    std::unique_ptr<poppler::page> page(doc->create_page(i));
    if (!page) continue;
    std::string text = utf16_to_utf8(page->text(poppler::rectf(), poppler::page::non_raw_non_physical_layout));
    while (!text.empty() && (text.back() == ' ' || text.back() == '\n' || text.back() == '\t')) text.pop_back();
    if (text.empty()) continue;
    if (written > 0) text.insert(0, "\n\n");
    text.resize(utf8_cut(text, max_bytes - written));
    if (!write_all(k_pipe_fd, text)) return exit_ok;  // the parent stopped reading
    written += text.size();
  }
  return exit_ok;
}

/// The PDF in the input memfd, mapped read-only ("" when empty or not mappable).
std::string_view mapped_input() {
  struct stat st {};
  if (::fstat(k_input_fd, &st) != 0 || st.st_size <= 0) return {};
  void* p = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, k_input_fd, 0);
  if (p == MAP_FAILED) return {};
  return {static_cast<const char*>(p), static_cast<std::size_t>(st.st_size)};
}

/// The child: a fresh process (this program exec'd again, so nothing of the parent's threads or
/// locks comes along); its parameters are "<max_pages> <max_bytes> <cpu_seconds> <parent pid>".
[[noreturn]] void child_main(const char* spec) {
  int status = exit_setup_failed;
  try {
    long long pages = 0, bytes = 0, cpu = 0, parent = 0;
    if (std::sscanf(spec, "%lld %lld %lld %lld", &pages, &bytes, &cpu, &parent) == 4) {
      confine_fds();
      const std::string_view pdf = mapped_input();
      const auto bpf = build_filter();  // before the limits: it writes the program to a memfd
      if (limit_and_harden(static_cast<rlim_t>(cpu), static_cast<pid_t>(parent))) {
        const auto keep_alive = warm_up(tiny_pdf("warm up"));
        if (bpf && install_filter(*bpf)) status = extract(pdf, static_cast<int>(pages), static_cast<std::size_t>(bytes));
      }
    }
  } catch (...) {
    status = exit_unreadable;
  }
  ::_exit(status);
}

/// Runs before main() in every program that links this file (warden, tools_test): when started
/// as a PDF child it never returns. glibc passes no arguments we need; the parameters come in
/// the environment, which holds nothing else.
[[gnu::constructor]] void pdf_child_entry() {
  if (const char* spec = std::getenv(k_child_env); spec != nullptr) child_main(spec);
}

/// `fd` moved to a number above 10 (so that placing 3 and 4 in the child cannot clobber it).
int high_fd(int fd) { return fd < 0 ? fd : ::fcntl(fd, F_DUPFD_CLOEXEC, 10); }

/// Starts the child with the PDF on `input` (fd 4) and `output` (fd 3); its pid, or an error.
result<pid_t> spawn_child(int input, int output, int max_pages, std::size_t max_bytes, rlim_t cpu_seconds) {
  const int in = high_fd(input), out = high_fd(output);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out, k_pipe_fd);
  posix_spawn_file_actions_adddup2(&fa, in, k_input_fd);
  std::string env = std::string(k_child_env) + "=" + std::to_string(max_pages) + " " + std::to_string(max_bytes) + " " +
                    std::to_string(cpu_seconds) + " " + std::to_string(::getpid());
  char arg0[] = "warden-pdf-text";
  char* argv[] = {arg0, nullptr};
  char* envp[] = {env.data(), nullptr};
  pid_t pid = -1;
  const int rc = (in < 0 || out < 0) ? EMFILE : ::posix_spawn(&pid, "/proc/self/exe", &fa, nullptr, argv, envp);
  posix_spawn_file_actions_destroy(&fa);
  if (in >= 0) ::close(in);
  if (out >= 0) ::close(out);
  if (rc != 0) return make_error(errc::internal, std::string("starting the PDF reader: ") + std::strerror(rc), {}, "pdf_sandbox");
  return pid;
}

// ---- the parent -------------------------------------------------------------------------------

struct unique_fd {
  int fd = -1;
  explicit unique_fd(int f) : fd(f) {}
  unique_fd(const unique_fd&) = delete;
  unique_fd& operator=(const unique_fd&) = delete;
  ~unique_fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

enum class read_end { eof, timed_out, too_much, failed };

/// Reads the child's text until end of file, the deadline, or more than `max_bytes`.
read_end read_text(int fd, clock::time_point deadline, std::size_t max_bytes, std::string& out) {
  char buf[65536];
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock::now()).count();
    if (left <= 0) return read_end::timed_out;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, INT_MAX)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return read_end::failed;
    if (ready == 0) continue;  // the loop's top sees the deadline
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) return read_end::failed;
    if (n == 0) return read_end::eof;
    if (out.size() + static_cast<std::size_t>(n) > max_bytes) return read_end::too_much;
    out.append(buf, static_cast<std::size_t>(n));
  }
}

/// A spawned child that is always reaped: by wait_for_exit, or else (an exception, an early
/// return) killed and reaped by the destructor.
class child_process {
 public:
  explicit child_process(pid_t pid) : pid_(pid) {}
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;
  ~child_process() {
    if (!reaped_) (void)kill_and_reap();
  }

  /// Waits until the deadline for the child to exit (it closed its pipe, so it should be
  /// exiting), then kills it; returns its wait status, or -1 when it could not be reaped
  /// (SIGCHLD ignored: the kernel reaped it).
  int wait_for_exit(clock::time_point deadline) {
    int status = 0;
    auto pause = std::chrono::microseconds(100);
    while (clock::now() < deadline) {
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        reaped_ = true;
        return status;
      }
      if (r < 0 && errno != EINTR) {
        reaped_ = true;
        return -1;
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(10000));
    }
    return kill_and_reap();
  }

  int kill_and_reap() {
    ::kill(pid_, SIGKILL);
    int status = 0;
    for (;;) {
      const pid_t r = ::waitpid(pid_, &status, 0);
      if (r == pid_) break;
      if (r < 0 && errno != EINTR) {
        status = -1;
        break;
      }
    }
    reaped_ = true;
    return status;
  }

 private:
  pid_t pid_;
  bool reaped_ = false;
};

std::string seconds_text(std::chrono::milliseconds t) {
  const long long ms = std::max<long long>(t.count(), 0);
  std::string s = std::to_string(ms / 1000);
  if (const long long frac = ms % 1000; frac != 0) {
    std::string f = std::to_string(1000 + frac).substr(1);
    while (f.back() == '0') f.pop_back();
    s += "." + f;
  }
  return s;
}

error pdf_error(std::string message, std::string type_code) {
  return make_error(errc::invalid_request, std::move(message), {}, std::move(type_code));
}

bool has_pdf_header(std::string_view bytes) {
  return bytes.substr(0, 1024).find("%PDF-") != std::string_view::npos;
}

/// What the child's end and output mean.
result<std::string> outcome(read_end how, int status, std::string text, std::size_t max_bytes,
                            std::chrono::milliseconds timeout) {
  const error unreadable = pdf_error("PDF could not be read", "pdf_unreadable");
  const bool killed_for_time =
      status != -1 && WIFSIGNALED(status) && (WTERMSIG(status) == SIGXCPU || (WTERMSIG(status) == SIGKILL && how == read_end::eof));
  if (how == read_end::timed_out || killed_for_time) {
    return pdf_error("PDF text extraction timed out after " + seconds_text(timeout) + " s", "pdf_timeout");
  }
  if (how != read_end::eof || status == -1 || !WIFEXITED(status)) return unreadable;
  switch (WEXITSTATUS(status)) {
    case exit_ok: break;
    case exit_encrypted: return pdf_error("PDF is encrypted (a password is needed to read it)", "pdf_encrypted");
    case exit_setup_failed:
      return make_error(errc::internal, "the PDF reader could not be confined", {}, "pdf_sandbox");
    default: return unreadable;
  }
  if (!is_valid_utf8(text)) text = to_valid_utf8(text);
  text.resize(utf8_cut(text, max_bytes));
  return text;
}

}  // namespace

result<std::string> pdf_to_text(std::string_view pdf_bytes, int max_pages, std::size_t max_bytes,
                                std::chrono::milliseconds timeout) {
  if (!has_pdf_header(pdf_bytes)) return pdf_error("not a PDF", "not_pdf");
  if (pdf_bytes.size() > static_cast<std::size_t>(INT_MAX)) return pdf_error("PDF could not be read", "pdf_unreadable");
  timeout = std::clamp(timeout, std::chrono::milliseconds(0), std::chrono::milliseconds(std::chrono::hours(24)));
  const auto deadline = clock::now() + timeout;
  const auto cpu_seconds = static_cast<rlim_t>((std::max<long long>(timeout.count(), 0) + 999) / 1000 + 1);

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return make_error(errc::internal, std::string("pipe: ") + std::strerror(errno), {}, "pdf_sandbox");
  }
  unique_fd read_fd(fds[0]);
  unique_fd write_fd(fds[1]);
  unique_fd input(::memfd_create("warden-pdf", MFD_CLOEXEC));
  if (input.fd < 0 || !write_all(input.fd, pdf_bytes)) {
    return make_error(errc::internal, std::string("memfd: ") + std::strerror(errno), {}, "pdf_sandbox");
  }
  auto pid = spawn_child(input.fd, write_fd.fd, std::max(max_pages, 1), max_bytes, cpu_seconds);
  if (!pid) return pid.error();
  child_process child(*pid);
  write_fd.reset();
  input.reset();
  std::string text;
  const read_end how = read_text(read_fd.fd, deadline, max_bytes, text);
  read_fd.reset();
  const int status = how == read_end::eof ? child.wait_for_exit(deadline) : child.kill_and_reap();
  return outcome(how, status, std::move(text), max_bytes, timeout);
}

}  // namespace warden::tools
