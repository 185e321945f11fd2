#include "engine/http_client.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <curl/curl.h>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/container/small_vector.hpp>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

namespace warden::engine {

namespace asio = boost::asio;

namespace {

constexpr const char* k_shutting_down = "server shutting down";

/// Flow control per transfer: past this many bytes queued for a consumer that has not taken them
/// (a client reading slowly), curl stops reading the upstream (CURL_WRITEFUNC_PAUSE), so TCP
/// slows the upstream down instead of warden holding its whole body; it reads again once the
/// consumer has taken the queue below the low mark.
constexpr std::size_t k_queue_high_bytes = 1u << 20;
constexpr std::size_t k_queue_low_bytes = 256u << 10;

errc classify(CURLcode rc) {
  if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_COULDNT_RESOLVE_PROXY) {
    return errc::upstream_unavailable;
  }
  return errc::upstream_error;
}

struct curl_global {
  curl_global() { curl_global_init(CURL_GLOBAL_DEFAULT); }
};

void ensure_global() { static curl_global g; }

/// The inode of an open socket (0 when fstat fails): tells a reused descriptor number apart.
ino_t inode_of(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 ? st.st_ino : 0;
}

bool same_context(const asio::any_io_executor& ex, asio::io_context& ioc) {
  return &asio::query(ex, asio::execution::context) == static_cast<asio::execution_context*>(&ioc);
}

}  // namespace

/// The driver: the multi handle, its transfers, the asio objects that watch curl's sockets and
/// timeout. Every member below `mu` is guarded by it; curl's callbacks run inside multi calls
/// made under it, so they never lock it.
struct http_client::impl : std::enable_shared_from_this<impl> {
  /// Channels that got events during the current multi call, notified once `mu` is released.
  using wake_list = boost::container::small_vector<std::shared_ptr<call_channel>, 4>;

  struct transfer {
    impl* owner = nullptr;
    CURL* easy = nullptr;
    curl_slist* headers = nullptr;
    std::string body;
    std::shared_ptr<call_channel> call;
    asio::any_io_executor wait_ex;  ///< where this transfer's socket waits complete
    bool head_sent = false;
    bool paused = false;            ///< curl holds the body back until the consumer catches up
    char curl_error[CURL_ERROR_SIZE] = {};

    void send_head();
    void push(call_event ev) {
      call->enqueue(std::move(ev));
      if (owner->touched.empty() || owner->touched.back() != call) owner->touched.push_back(call);
    }
  };

  /// One socket curl asked to watch: wrapped for asio, released (never closed) when curl is done.
  struct watch {
    watch(asio::io_context& ioc, int fd) : sd(ioc, fd), inode(inode_of(fd)) {}
    ~watch() { sd.release(); }
    watch(const watch&) = delete;
    watch& operator=(const watch&) = delete;
    asio::posix::stream_descriptor sd;
    ino_t inode;
    std::uint64_t token = 0;  ///< identifies this watch's waits (descriptor numbers are reused)
    int want = 0;             ///< CURL_POLL_IN / OUT / INOUT
    bool reading = false;     ///< a read wait is outstanding
    bool writing = false;
    asio::any_io_executor wait_ex;
  };

  /// Completion handler of a socket wait.
  struct ready {
    std::weak_ptr<impl> self;
    int fd;
    std::uint64_t token;
    int select;  ///< CURL_CSELECT_IN or CURL_CSELECT_OUT
    void operator()(boost::system::error_code ec) const {
      if (auto s = self.lock()) s->on_ready(fd, token, select, ec);
    }
  };

  CURLM* multi = nullptr;
  std::atomic<std::size_t> active{0};
  mutable std::mutex mu;
  asio::io_context* ioc = nullptr;  ///< null before attach() and once detached
  std::optional<asio::steady_timer> timer;
  std::uint64_t timer_gen = 0;
  bool timeout_due = false;  ///< curl asked for a timeout of 0: run before the multi call returns
  std::unordered_map<CURL*, std::unique_ptr<transfer>> running;
  std::unordered_map<int, std::unique_ptr<watch>> sockets;
  std::uint64_t next_token = 0;
  wake_list touched;

  impl() {
    ensure_global();
    multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, &impl::on_socket);
    curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, this);
    curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, &impl::on_timer);
    curl_multi_setopt(multi, CURLMOPT_TIMERDATA, this);
  }
  ~impl() { curl_multi_cleanup(multi); }  // after detach(): no transfer, no asio object left

  void attach(asio::io_context& io);
  void detach(wake_list& dropped);
  void finish(CURL* easy, std::optional<error> failure);
  void drain();
  void run_due_timeouts();
  void act(curl_socket_t fd, int select);
  void arm(watch& w);
  int socket_changed(CURL* easy, curl_socket_t s, int what);
  int timer_changed(long timeout_ms);
  void on_ready(int fd, std::uint64_t token, int select, boost::system::error_code ec);
  void on_timeout(std::uint64_t gen, boost::system::error_code ec);
  void cancel(CURL* easy, const std::shared_ptr<call_channel>& call);
  void pause(transfer& t);
  void resume(CURL* easy, const std::shared_ptr<call_channel>& call);

  static int on_socket(CURL* easy, curl_socket_t s, int what, void* userp, void*) {
    return static_cast<impl*>(userp)->socket_changed(easy, s, what);
  }
  static int on_timer(CURLM*, long timeout_ms, void* userp) {
    return static_cast<impl*>(userp)->timer_changed(timeout_ms);
  }
  static size_t on_write(char* ptr, size_t size, size_t nmemb, void* userdata) {
    auto* t = static_cast<transfer*>(userdata);
    const size_t n = size * nmemb;
    t->send_head();
    if (t->call->queued_bytes() >= k_queue_high_bytes) {  // a slow reader: stop reading the upstream
      t->owner->pause(*t);
      return CURL_WRITEFUNC_PAUSE;
    }
    call_event ev;
    ev.type = call_event::kind::data;
    ev.bytes.assign(ptr, n);
    t->push(std::move(ev));
    return n;
  }
};

void http_client::impl::transfer::send_head() {
  if (head_sent) return;
  head_sent = true;
  call_event ev;
  ev.type = call_event::kind::head;
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &ev.status);
  char* ct = nullptr;
  if (curl_easy_getinfo(easy, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct) ev.content_type = ct;
  push(std::move(ev));
}

namespace {

/// Registered with each io_context a client runs on: when that io_context shuts down (it is
/// being destroyed), the clients still alive detach from it before its objects go away.
class curl_io_service : public asio::execution_context::service {
 public:
  using key_type = curl_io_service;
  static asio::execution_context::id id;
  explicit curl_io_service(asio::execution_context& ctx) : asio::execution_context::service(ctx) {}

  /// `detach` runs at shutdown unless `alive` has expired by then.
  void add(std::weak_ptr<void> alive, std::function<void()> detach) {
    std::lock_guard lock(mu_);
    std::erase_if(clients_, [](const entry& e) { return e.alive.expired(); });
    clients_.push_back({std::move(alive), std::move(detach)});
  }

 private:
  struct entry {
    std::weak_ptr<void> alive;
    std::function<void()> detach;
  };
  void shutdown() override {
    std::vector<entry> clients;
    {
      std::lock_guard lock(mu_);
      clients.swap(clients_);
    }
    for (auto& e : clients) {
      if (!e.alive.expired()) e.detach();
    }
  }
  std::mutex mu_;
  std::vector<entry> clients_;
};

asio::execution_context::id curl_io_service::id;

}  // namespace

void http_client::impl::attach(asio::io_context& io) {
  {
    std::lock_guard lock(mu);
    ioc = &io;
    timer.emplace(io);
  }
  std::weak_ptr<impl> weak = weak_from_this();
  asio::use_service<curl_io_service>(io).add(weak, [weak] {
    wake_list dropped;  // not woken: their coroutines are destroyed with the io_context
    if (auto self = weak.lock()) self->detach(dropped);
  });
}

/// Ends every transfer with errc::cancelled (the channels that got an `end` are added to
/// `dropped`) and lets go of every asio object; the client then does no more I/O.
void http_client::impl::detach(wake_list& dropped) {
  std::lock_guard lock(mu);
  if (ioc == nullptr) return;
  while (!running.empty()) finish(running.begin()->first, make_error(errc::cancelled, k_shutting_down));
  sockets.clear();
  timer.reset();
  ioc = nullptr;
  dropped.swap(touched);
}

void http_client::impl::finish(CURL* easy, std::optional<error> failure) {
  auto it = running.find(easy);
  if (it == running.end()) return;
  std::unique_ptr<transfer> t = std::move(it->second);
  running.erase(it);
  curl_multi_remove_handle(multi, easy);
  if (!failure) t->send_head();
  call_event ev;
  ev.type = call_event::kind::end;
  ev.failure = std::move(failure);
  t->push(std::move(ev));
  curl_slist_free_all(t->headers);
  curl_easy_cleanup(t->easy);
  active.fetch_sub(1);
}

/// Ends the transfers curl reports done.
void http_client::impl::drain() {
  int left = 0;
  while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
    if (msg->msg != CURLMSG_DONE) continue;
    CURL* e = msg->easy_handle;
    const CURLcode rc = msg->data.result;
    std::optional<error> failure;
    if (rc != CURLE_OK) {
      auto it = running.find(e);
      std::string detail = it != running.end() && it->second->curl_error[0] ? it->second->curl_error
                                                                          : curl_easy_strerror(rc);
      // libcurl reports a response header over its limit (100 KB) as out of memory.
      if (rc == CURLE_OUT_OF_MEMORY) detail = "the upstream's response could not be read (a header over 100 KB?): " + detail;
      failure = make_error(classify(rc), detail);
    }
    finish(e, std::move(failure));
  }
}

/// Runs curl's timeouts of 0 right away (a few rounds), rather than through the timer.
void http_client::impl::run_due_timeouts() {
  for (int round = 0; timeout_due && round < 8; ++round) {
    timeout_due = false;
    int still = 0;
    curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &still);
    drain();
  }
  if (timeout_due && timer) {  // still due: let the io_context breathe first
    timeout_due = false;
    timer_changed(1);
  }
}

void http_client::impl::act(curl_socket_t fd, int select) {
  int still = 0;
  curl_multi_socket_action(multi, fd, select, &still);
  drain();
  run_due_timeouts();
}

void http_client::impl::arm(watch& w) {
  if ((w.want & CURL_POLL_IN) && !w.reading) {
    w.reading = true;
    w.sd.async_wait(asio::posix::descriptor_base::wait_read,
                    asio::bind_executor(w.wait_ex, ready{weak_from_this(), w.sd.native_handle(), w.token, CURL_CSELECT_IN}));
  }
  if ((w.want & CURL_POLL_OUT) && !w.writing) {
    w.writing = true;
    w.sd.async_wait(asio::posix::descriptor_base::wait_write,
                    asio::bind_executor(w.wait_ex, ready{weak_from_this(), w.sd.native_handle(), w.token, CURL_CSELECT_OUT}));
  }
}

/// curl's socket callback: watch `s` for `what` on the executor of the transfer using it.
int http_client::impl::socket_changed(CURL* easy, curl_socket_t s, int what) {
  auto it = sockets.find(s);
  if (what == CURL_POLL_REMOVE || ioc == nullptr) {
    if (it != sockets.end()) sockets.erase(it);  // released: curl closes it, or watches it again later
    return 0;
  }
  if (it != sockets.end() && it->second->inode != inode_of(s)) {  // closed and reused under us
    sockets.erase(it);
    it = sockets.end();
  }
  if (it == sockets.end()) {
    try {
      it = sockets.emplace(s, std::make_unique<watch>(*ioc, s)).first;
    } catch (const boost::system::system_error&) {
      return -1;  // curl fails the transfer
    }
    it->second->token = ++next_token;
  }
  watch& w = *it->second;
  w.want = what;
  auto t = running.find(easy);
  w.wait_ex = t != running.end() ? t->second->wait_ex : asio::any_io_executor(ioc->get_executor());
  arm(w);
  return 0;
}

/// curl's timer callback: -1 = none, 0 = now (run before the multi call returns), else in ms.
int http_client::impl::timer_changed(long timeout_ms) {
  if (!timer) return 0;
  if (timeout_ms < 0) {
    ++timer_gen;
    timer->cancel();
    return 0;
  }
  if (timeout_ms == 0) {
    timeout_due = true;
    return 0;
  }
  const std::uint64_t gen = ++timer_gen;
  timer->expires_after(std::chrono::milliseconds(timeout_ms));
  timer->async_wait([weak = weak_from_this(), gen](boost::system::error_code ec) {
    if (auto self = weak.lock()) self->on_timeout(gen, ec);
  });
  return 0;
}

void http_client::impl::on_ready(int fd, std::uint64_t token, int select, boost::system::error_code ec) {
  wake_list wakes;
  {
    std::lock_guard lock(mu);
    auto it = sockets.find(fd);
    if (it == sockets.end() || it->second->token != token) return;  // released meanwhile
    watch& w = *it->second;
    const int dir = select == CURL_CSELECT_IN ? CURL_POLL_IN : CURL_POLL_OUT;
    (select == CURL_CSELECT_IN ? w.reading : w.writing) = false;
    if (ec == asio::error::operation_aborted || (w.want & dir) == 0) return;
    act(fd, select | (ec ? CURL_CSELECT_ERR : 0));
    // curl calls back only when what it wants changes: wait again for the same.
    auto again = sockets.find(fd);
    if (again != sockets.end() && again->second->token == token) arm(*again->second);
    wakes.swap(touched);
  }
  for (auto& c : wakes) c->notify();
}

void http_client::impl::on_timeout(std::uint64_t gen, boost::system::error_code ec) {
  wake_list wakes;
  {
    std::lock_guard lock(mu);
    if (ec == asio::error::operation_aborted || gen != timer_gen || ioc == nullptr) return;
    act(CURL_SOCKET_TIMEOUT, 0);
    wakes.swap(touched);
  }
  for (auto& c : wakes) c->notify();
}

void http_client::impl::cancel(CURL* easy, const std::shared_ptr<call_channel>& call) {
  wake_list wakes;
  {
    std::lock_guard lock(mu);
    auto it = running.find(easy);
    if (it == running.end() || it->second->call != call) return;  // ended already
    finish(easy, make_error(errc::cancelled, "request cancelled"));
    wakes.swap(touched);
  }
  for (auto& c : wakes) c->notify(false);  // the caller may be a consumer mid-step: post
}

/// Inside on_write, under `mu`: the transfer stops until its consumer has taken the queue below
/// the low-water mark; then resume() runs on the transfer's executor.
void http_client::impl::pause(transfer& t) {
  t.paused = true;
  std::weak_ptr<impl> self = weak_from_this();
  std::weak_ptr<call_channel> call = t.call;
  CURL* easy = t.easy;
  asio::any_io_executor ex = t.wait_ex;
  t.call->resume_below(k_queue_low_bytes, [self, call, easy, ex] {
    asio::post(ex, [self, call, easy] {
      auto s = self.lock();
      auto c = call.lock();
      if (s && c) s->resume(easy, c);
    });
  });
}

void http_client::impl::resume(CURL* easy, const std::shared_ptr<call_channel>& call) {
  wake_list wakes;
  {
    std::lock_guard lock(mu);
    auto it = running.find(easy);
    if (it == running.end() || it->second->call != call || !it->second->paused) return;  // ended meanwhile
    it->second->paused = false;
    curl_easy_pause(easy, CURLPAUSE_CONT);  // may deliver the held bytes (and pause again) right here
    drain();
    run_due_timeouts();
    wakes.swap(touched);
  }
  for (auto& c : wakes) c->notify();
}

struct http_client::own_loop {
  asio::io_context ioc{1};
  asio::executor_work_guard<asio::io_context::executor_type> work{ioc.get_executor()};
  std::thread thread{[this] { ioc.run(); }};
  ~own_loop() {
    work.reset();
    ioc.stop();
    thread.join();
  }
};

http_client::http_client() : own_(std::make_unique<own_loop>()) {
  shards_.push_back(std::make_shared<impl>());
  shards_.front()->attach(own_->ioc);
}

http_client::http_client(asio::io_context& ioc, std::size_t shards) {
  for (std::size_t i = 0; i < std::max<std::size_t>(shards, 1); ++i) {
    shards_.push_back(std::make_shared<impl>());
    shards_.back()->attach(ioc);
  }
}

http_client::~http_client() {
  for (auto& shard : shards_) {
    impl::wake_list ended;
    shard->detach(ended);
    for (auto& c : ended) c->notify(false);
  }
  own_.reset();
}

/// The calling thread's shard: threads are numbered as they first start a transfer, so each of
/// n io threads drives a multi handle of its own and their curl work never waits on one lock.
http_client::impl& http_client::shard_for_this_thread() {
  static std::atomic<std::size_t> next{0};
  thread_local const std::size_t mine = next.fetch_add(1);
  return *shards_[mine % shards_.size()];
}

namespace {
/// A curl easy handle for `req`, writing into `t` (whose body it sends).
template <typename Transfer>
void configure(Transfer& t, const http_call_request& req, size_t (*on_write)(char*, size_t, size_t, void*)) {
  CURL* e = t.easy;
  curl_easy_setopt(e, CURLOPT_URL, req.url.c_str());
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(e, CURLOPT_NOPROXY, "localhost,127.0.0.1,::1");  // never proxy loopback
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, req.connect_timeout_ms);
  if (req.total_timeout_ms > 0) curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, req.total_timeout_ms);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t.curl_error);
  curl_easy_setopt(e, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
  if (req.method == "POST") {
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, t.body.data());
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(t.body.size()));
  } else if (req.method != "GET") {
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, req.method.c_str());
  }
  t.headers = curl_slist_append(t.headers, "Expect:");  // no 100-continue round trip
  for (const auto& h : req.headers) t.headers = curl_slist_append(t.headers, h.c_str());
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, t.headers);
}
}  // namespace

std::shared_ptr<upstream_call> http_client::start(http_call_request req, asio::any_io_executor ex) {
  auto call = upstream_call::make(ex);
  impl& shard = shard_for_this_thread();
  auto t = std::make_unique<impl::transfer>();
  t->owner = &shard;
  t->call = call->channel();
  t->body = std::move(req.body);
  t->easy = curl_easy_init();
  configure(*t, req, &impl::on_write);
  CURL* easy = t->easy;
  std::weak_ptr<impl> weak_self = shard.weak_from_this();
  std::weak_ptr<call_channel> weak = call->channel();
  call->channel()->set_canceller([weak_self, weak, easy] {
    auto self = weak_self.lock();
    auto c = weak.lock();
    if (self && c) self->cancel(easy, c);
  });
  impl::wake_list wakes;
  {
    std::lock_guard lock(shard.mu);
    if (shard.ioc == nullptr) {  // detached: the io_context is going away
      call_event ev;
      ev.failure = make_error(errc::cancelled, k_shutting_down);
      call->channel()->enqueue(std::move(ev));
      curl_slist_free_all(t->headers);
      curl_easy_cleanup(easy);
      return call;
    }
    t->wait_ex = same_context(ex, *shard.ioc) ? ex : asio::any_io_executor(shard.ioc->get_executor());
    shard.active.fetch_add(1);
    shard.running.emplace(easy, std::move(t));
    curl_multi_add_handle(shard.multi, easy);
    shard.timeout_due = true;  // start it here and now: connect, or send on a kept-alive connection
    shard.run_due_timeouts();
    wakes.swap(shard.touched);
  }
  for (auto& c : wakes) c->notify(false);
  return call;
}

void http_client::abort_all(std::string reason) {
  for (auto& shard : shards_) {
    impl::wake_list wakes;
    {
      std::lock_guard lock(shard->mu);
      while (!shard->running.empty()) {
        shard->finish(shard->running.begin()->first, make_error(errc::upstream_unavailable, reason));
      }
      wakes.swap(shard->touched);
    }
    for (auto& c : wakes) c->notify(false);
  }
}

std::size_t http_client::active() const {
  std::size_t n = 0;
  for (const auto& shard : shards_) n += shard->active.load();
  return n;
}

namespace {
size_t collect(char* ptr, size_t size, size_t nmemb, void* userdata) {
  static_cast<std::string*>(userdata)->append(ptr, size * nmemb);
  return size * nmemb;
}
}  // namespace

namespace {
/// False when this process cannot open one more socket now (out of file descriptors): then a
/// failed request says nothing about the other side. curl does not always keep socket()'s errno.
bool can_open_a_socket() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return !(errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM);
  ::close(fd);
  return true;
}
}  // namespace

result<http_reply> http_client::get_blocking(const std::string& url, const std::vector<std::string>& headers,
                                             long timeout_ms) {
  ensure_global();
  CURL* e = curl_easy_init();
  if (e == nullptr) return make_error(errc::upstream_unavailable, "out of memory for a request", "", k_local_shortage);
  http_reply reply;
  curl_slist* hl = nullptr;
  for (const auto& h : headers) hl = curl_slist_append(hl, h.c_str());
  curl_easy_setopt(e, CURLOPT_URL, url.c_str());
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(e, CURLOPT_NOPROXY, "localhost,127.0.0.1,::1");
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, hl);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &collect);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &reply.body);
  const CURLcode rc = curl_easy_perform(e);
  if (rc == CURLE_OK) curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &reply.status);
  long os_errno = 0;
  if (rc != CURLE_OK) curl_easy_getinfo(e, CURLINFO_OS_ERRNO, &os_errno);
  curl_slist_free_all(hl);
  curl_easy_cleanup(e);
  if (rc == CURLE_OUT_OF_MEMORY || os_errno == EMFILE || os_errno == ENFILE || os_errno == ENOBUFS ||
      (rc != CURLE_OK && !can_open_a_socket())) {
    return make_error(errc::upstream_unavailable, std::string("could not try: ") + curl_easy_strerror(rc) +
                      (os_errno != 0 ? std::string(" (") + std::strerror(static_cast<int>(os_errno)) + ")" : ""),
                      "", k_local_shortage);
  }
  if (rc != CURLE_OK || reply.status == 0) {
    return make_error(errc::upstream_unavailable, rc != CURLE_OK ? curl_easy_strerror(rc) : "no HTTP status", "",
                      k_unreachable);
  }
  return reply;
}

}  // namespace warden::engine
