// The fuzz smoke of `make test`: a harness of fuzz/ linked with this driver instead of libFuzzer, so
// the ordinary g++ builds (Release and ASan+UBSan) build and run every harness without the clang
// fuzz build (docs/testing.md#fuzzing). It is no coverage-guided fuzzer: it runs each committed
// seed, then random mutations of them (bit flips, byte edits, erased / copied ranges, dictionary
// words, splices of two seeds) for a set time. `make fuzz` is the real, coverage-guided run.
//
//   fuzz_smoke_<name> [--seconds S] [--seed N] [--dict FILE] [--crash-dir DIR] CORPUS_DIR...
//
// S defaults to 3, N to 1 (a run is repeatable: the same seed and time budget try the same inputs
// in the same order, up to how many fit in the time). When an input crashes the harness (a broken
// invariant, a sanitizer report, a signal), the input is written to DIR/crash-<pid>-<n> (DIR
// defaults to the current folder) and its path printed; an abort (a broken invariant, a sanitizer
// report with abort_on_error=1) then exits 134, a fault goes on to ASan's report; replay it by
// giving that file to the libFuzzer build's fuzz_<name>, or to this driver as the only corpus.
// Prints one line at the end: seeds, executions, seconds.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

constexpr std::size_t k_max_input = 64 * 1024;  // libFuzzer's default -max_len is 4096; seeds are larger

using bytes = std::vector<std::uint8_t>;

// What the crash handler writes: set before each call (no allocation in the handler).
const bytes* g_current = nullptr;
char g_crash_path[4096] = "";

// The handlers that were there before ours (ASan's for SIGSEGV, SIGBUS and SIGFPE).
struct sigaction g_previous[32];

void write_crash_input() {
  if (g_current == nullptr || g_crash_path[0] == '\0') return;
  const int fd = ::open(g_crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  std::size_t off = 0;
  while (off < g_current->size()) {
    const ssize_t n = ::write(fd, g_current->data() + off, g_current->size() - off);
    if (n <= 0) break;
    off += static_cast<std::size_t>(n);
  }
  ::close(fd);
  static const char k_msg[] = "fuzz smoke: the crashing input is in ";
  (void)!::write(2, k_msg, sizeof k_msg - 1);
  (void)!::write(2, g_crash_path, std::strlen(g_crash_path));
  (void)!::write(2, "\n", 1);
  g_current = nullptr;
}

// SIGABRT (a broken invariant, or a sanitizer's report with abort_on_error=1): the input is
// written, then exit 134, an exit code rather than the signal, so ctest reads the output (the
// self-test). A fault: the input is written and the previous handler put back; returning re-runs
// the faulting instruction, which that handler (ASan's report, or the default) then takes.
void on_crash(int sig) {
  write_crash_input();
  if (sig == SIGABRT) ::_exit(128 + sig);
  ::sigaction(sig, &g_previous[sig], nullptr);
}

void install_crash_handlers() {
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) {
    struct sigaction sa {};
    sa.sa_handler = on_crash;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, &g_previous[sig]);
  }
}

bool read_file(const std::string& path, bytes& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (out.size() > k_max_input) out.resize(k_max_input);
  return true;
}

/// Every regular file of `dir` (not recursive), in name order; a file given instead is itself.
std::vector<bytes> read_corpus(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      if (e->d_name[0] != '.') names.push_back(dir + "/" + e->d_name);
    }
    ::closedir(d);
  } else {
    names.push_back(dir);
  }
  std::sort(names.begin(), names.end());
  std::vector<bytes> out;
  for (const auto& n : names) {
    bytes b;
    if (read_file(n, b)) out.push_back(std::move(b));
  }
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// The words of a libFuzzer dictionary: one `"word"` or `name="word"` per line, `#` comments,
/// escapes \\ \" and \xNN. A line it cannot read is skipped.
std::vector<bytes> read_dict(const std::string& path) {
  std::vector<bytes> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const auto open = line.find('"');
    const auto close = line.rfind('"');
    if (line.empty() || line[0] == '#' || open == std::string::npos || close <= open) continue;
    bytes w;
    for (std::size_t i = open + 1; i < close; ++i) {
      if (line[i] != '\\' || i + 1 >= close) {
        w.push_back(static_cast<std::uint8_t>(line[i]));
      } else if (line[i + 1] == 'x' && i + 3 < close && hex_value(line[i + 2]) >= 0 && hex_value(line[i + 3]) >= 0) {
        w.push_back(static_cast<std::uint8_t>(hex_value(line[i + 2]) * 16 + hex_value(line[i + 3])));
        i += 3;
      } else {
        w.push_back(static_cast<std::uint8_t>(line[++i]));
      }
    }
    if (!w.empty()) out.push_back(std::move(w));
  }
  return out;
}

class mutator {
 public:
  mutator(std::uint64_t seed, const std::vector<bytes>& seeds, const std::vector<bytes>& dict)
      : rng_(seed), seeds_(seeds), dict_(dict) {}

  /// A seed with 1 to 8 random edits.
  bytes next() {
    bytes b = seeds_.empty() ? bytes{} : seeds_[below(seeds_.size())];
    const std::size_t edits = 1 + below(8);
    for (std::size_t i = 0; i < edits; ++i) edit(b);
    if (b.size() > k_max_input) b.resize(k_max_input);
    return b;
  }

 private:
  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(rng_() % n); }
  std::uint8_t byte() { return static_cast<std::uint8_t>(rng_()); }

  void insert(bytes& b, const bytes& what) {
    const auto at = static_cast<std::ptrdiff_t>(below(b.size() + 1));
    b.insert(b.begin() + at, what.begin(), what.end());
  }

  void edit(bytes& b) {
    switch (below(b.empty() ? 2 : 8)) {
      case 0: insert(b, bytes{byte()}); break;
      case 1:
        if (!dict_.empty()) insert(b, dict_[below(dict_.size())]);
        else insert(b, bytes{byte()});
        break;
      case 2: b[below(b.size())] ^= static_cast<std::uint8_t>(1u << below(8)); break;
      case 3: b[below(b.size())] = byte(); break;
      case 4: {  // erase a range
        const std::size_t at = below(b.size());
        const std::size_t n = 1 + below(std::min<std::size_t>(b.size() - at, 64));
        b.erase(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + n));
        break;
      }
      case 5: {  // copy a range elsewhere
        const std::size_t at = below(b.size());
        const std::size_t n = 1 + below(std::min<std::size_t>(b.size() - at, 64));
        insert(b, bytes(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + n)));
        break;
      }
      case 6: b.resize(below(b.size() + 1)); break;  // truncate
      default: {  // splice: this input's head, another seed's tail
        const bytes& other = seeds_[below(seeds_.size())];
        b.resize(below(b.size() + 1));
        const std::size_t from = below(other.size() + 1);
        b.insert(b.end(), other.begin() + static_cast<std::ptrdiff_t>(from), other.end());
        break;
      }
    }
  }

  std::mt19937_64 rng_;
  const std::vector<bytes>& seeds_;
  const std::vector<bytes>& dict_;
};

void run_one(const bytes& input) {
  g_current = &input;
  // A copy of exactly the input's size, so ASan sees a read past its end.
  std::unique_ptr<std::uint8_t[]> copy(new std::uint8_t[input.size()]);
  if (!input.empty()) std::memcpy(copy.get(), input.data(), input.size());
  LLVMFuzzerTestOneInput(copy.get(), input.size());
  g_current = nullptr;
}

int usage() {
  std::fprintf(stderr, "usage: fuzz_smoke_NAME [--seconds S] [--seed N] [--dict FILE] [--crash-dir DIR] CORPUS_DIR...\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 3;
  std::uint64_t seed = 1;
  std::string dict_path;
  std::string crash_dir = ".";
  std::vector<std::string> dirs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--seconds" && has_value) seconds = std::atof(argv[++i]);
    else if (a == "--seed" && has_value) seed = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--dict" && has_value) dict_path = argv[++i];
    else if (a == "--crash-dir" && has_value) crash_dir = argv[++i];
    else if (a.rfind("--", 0) == 0) return usage();
    else dirs.push_back(a);
  }
  if (dirs.empty()) return usage();
  std::snprintf(g_crash_path, sizeof g_crash_path, "%s/crash-%d-%llu", crash_dir.c_str(), static_cast<int>(::getpid()),
                static_cast<unsigned long long>(seed));
  install_crash_handlers();

  std::vector<bytes> seeds;
  for (const auto& d : dirs) {
    auto more = read_corpus(d);
    seeds.insert(seeds.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
  if (seeds.empty()) {
    std::fprintf(stderr, "fuzz smoke: no seed inputs in the corpus folders given\n");
    return 2;
  }
  const std::vector<bytes> dict = dict_path.empty() ? std::vector<bytes>{} : read_dict(dict_path);

  const auto t0 = std::chrono::steady_clock::now();
  std::uint64_t execs = 0;
  run_one(bytes{});
  for (const auto& s : seeds) {
    run_one(s);
    ++execs;
  }
  mutator m(seed, seeds, dict);
  const auto budget = std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() - t0 < budget) {
    for (int i = 0; i < 64; ++i) {  // the clock read once per 64 inputs
      run_one(m.next());
      ++execs;
    }
  }
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("fuzz smoke: %zu seeds, %zu dictionary words, %llu executions in %.1f s, seed %llu, no crash\n",
              seeds.size(), dict.size(), static_cast<unsigned long long>(execs), took,
              static_cast<unsigned long long>(seed));
  return 0;
}
