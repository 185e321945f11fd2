// pdf_text — the text of a fetched PDF for the web_search tool and the knowledge base, extracted
// with poppler-cpp in a locked-down child process, so that a malicious PDF can neither crash
// warden nor run code with warden's rights.
//
// The child (one per call) is this same program started again (posix_spawn of /proc/self/exe:
// a fresh process, so no lock or allocator state of warden's threads comes along) with only
// WARDEN_PDF_CHILD in its environment; a constructor in pdf_text.cpp runs it before main():
// - fd 3 is a pipe to the parent, fd 4 a memfd holding the PDF (mapped read-only), 0..2
//   /dev/null; every other fd is closed (close_range);
// - it limits itself (setrlimit): address space to what it has plus k_pdf_address_space_bytes
//   (not under AddressSanitizer, whose shadow memory needs terabytes), CPU time to the timeout
//   rounded up plus one second, no core dumps, no file writes (RLIMIT_FSIZE 0), few fds;
//   PR_SET_NO_NEW_PRIVS, PR_SET_DUMPABLE 0, and PR_SET_PDEATHSIG SIGKILL (it dies with warden);
// - warms poppler up on a small built-in PDF (global tables, the text extractor), then installs a
//   seccomp allow-list (libseccomp): memory management, futex, write to fd 3, time, getrandom,
//   exit and a few other harmless calls; open/openat fail with EACCES (poppler copes with a
//   missing CMap or font file), and anything else kills the process;
// - only then loads the untrusted bytes (poppler::document::load_from_raw_data, no copy) and
//   writes the text of at most `max_pages` pages, page by page, converted from UTF-16 to UTF-8.
// The parent reads the pipe with poll() until the deadline, kills the child (SIGKILL) when it is
// late or writes more than allowed, and always reaps it (waitpid), so no zombie is left.
//
// Thread-safety: pdf_to_text may be called from many threads at once; each call has its own
// child and pipe (created O_CLOEXEC). It blocks the calling thread for up to `timeout` (plus
// the time to kill and reap a late child): call it from a blocking pool, not an event loop.
// It relies on SIGCHLD not being ignored (SIG_IGN would let the kernel reap the child early)
// and on no other code reaping every child with waitpid(-1).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "common/result.h"

namespace warden::tools {

/// Address space the PDF child may add to what it inherits from warden, in bytes (1 GiB).
inline constexpr std::size_t k_pdf_address_space_bytes = std::size_t{1} << 30;

/// The text of the PDF `pdf_bytes`: the text of its first `max_pages` pages (values below 1
/// count as 1) in reading order, each page's text with trailing whitespace trimmed, pages
/// separated by a blank line ("\n\n"). Well-formed UTF-8, at most `max_bytes` bytes (cut on a
/// UTF-8 boundary, with nothing marking the cut). A PDF without extractable text (a scan) gives
/// "". `timeout` bounds the whole extraction (spawn, parse, text) by the wall clock.
/// Errors, all errc::invalid_request (message / type_code):
///   "not a PDF" / "not_pdf": no "%PDF-" header within the first 1024 bytes;
///   "PDF could not be read" / "pdf_unreadable": poppler could not load it (damaged, truncated),
///     or the child died (a crash, a forbidden system call, out of memory);
///   "PDF is encrypted (a password is needed to read it)" / "pdf_encrypted";
///   "PDF text extraction timed out after N s" / "pdf_timeout" (N: `timeout` in seconds; a
///     timeout is clamped to 0..24 h).
/// errc::internal ("pdf_sandbox") when the child cannot be started (pipe, memfd, spawn, seccomp).
result<std::string> pdf_to_text(std::string_view pdf_bytes, int max_pages, std::size_t max_bytes,
                                std::chrono::milliseconds timeout);

}  // namespace warden::tools
