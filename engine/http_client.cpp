#include "engine/http_client.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <curl/curl.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace warden::engine {

namespace {

struct transfer {
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  std::string body;
  std::shared_ptr<call_channel> call;
  bool head_sent = false;
  char curl_error[CURL_ERROR_SIZE] = {};

  void send_head() {
    if (head_sent) return;
    head_sent = true;
    call_event ev;
    ev.type = call_event::kind::head;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &ev.status);
    char* ct = nullptr;
    if (curl_easy_getinfo(easy, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct) ev.content_type = ct;
    call->push(std::move(ev));
  }
};

size_t on_write(char* ptr, size_t size, size_t nmemb, void* userdata) {
  auto* t = static_cast<transfer*>(userdata);
  const size_t n = size * nmemb;
  t->send_head();
  call_event ev;
  ev.type = call_event::kind::data;
  ev.bytes.assign(ptr, n);
  t->call->push(std::move(ev));
  return n;
}

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

}  // namespace

struct http_client::impl {
  CURLM* multi = nullptr;
  std::thread thread;
  std::atomic<bool> stopping{false};
  mutable std::mutex mu;
  std::vector<std::unique_ptr<transfer>> to_add;
  std::vector<std::shared_ptr<call_channel>> to_cancel;
  std::map<CURL*, std::unique_ptr<transfer>> running;  // owned by the thread
  std::atomic<std::size_t> active{0};
  std::optional<std::string> abort_reason;  // guarded by mu

  void finish(CURL* easy, const std::optional<error>& failure) {
    auto it = running.find(easy);
    if (it == running.end()) return;
    std::unique_ptr<transfer> t = std::move(it->second);
    running.erase(it);
    curl_multi_remove_handle(multi, easy);
    if (!failure) t->send_head();
    call_event ev;
    ev.type = call_event::kind::end;
    ev.failure = failure;
    t->call->push(std::move(ev));
    curl_slist_free_all(t->headers);
    curl_easy_cleanup(t->easy);
    active.fetch_sub(1);
  }

  void loop() {
    while (!stopping.load()) {
      std::vector<std::unique_ptr<transfer>> adds;
      std::vector<std::shared_ptr<call_channel>> cancels;
      std::optional<std::string> abort;
      {
        std::lock_guard lock(mu);
        adds.swap(to_add);
        cancels.swap(to_cancel);
        abort.swap(abort_reason);
      }
      for (auto& t : adds) {
        CURL* e = t->easy;
        curl_multi_add_handle(multi, e);
        running.emplace(e, std::move(t));
      }
      for (auto& c : cancels) {
        for (auto& [easy, t] : running) {
          if (t->call == c) {
            finish(easy, make_error(errc::cancelled, "request cancelled"));
            break;
          }
        }
      }
      if (abort) {
        while (!running.empty()) finish(running.begin()->first, make_error(errc::upstream_unavailable, *abort));
      }
      int still = 0;
      curl_multi_perform(multi, &still);
      int left = 0;
      while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
        if (msg->msg != CURLMSG_DONE) continue;
        CURL* e = msg->easy_handle;
        const CURLcode rc = msg->data.result;
        std::optional<error> failure;
        if (rc != CURLE_OK) {
          auto it = running.find(e);
          std::string detail = it != running.end() && it->second->curl_error[0]
                                   ? it->second->curl_error
                                   : curl_easy_strerror(rc);
          failure = make_error(classify(rc), detail);
        }
        finish(e, failure);
      }
      curl_multi_poll(multi, nullptr, 0, 1000, nullptr);
    }
    for (auto it = running.begin(); it != running.end(); it = running.begin()) {
      finish(it->first, make_error(errc::cancelled, "server shutting down"));
    }
  }
};

http_client::http_client() : impl_(std::make_shared<impl>()) {
  ensure_global();
  impl_->multi = curl_multi_init();
  impl_->thread = std::thread([this] { impl_->loop(); });
}

http_client::~http_client() {
  impl_->stopping.store(true);
  curl_multi_wakeup(impl_->multi);
  impl_->thread.join();
  {
    std::lock_guard lock(impl_->mu);
    for (auto& t : impl_->to_add) {
      call_event ev;
      ev.type = call_event::kind::end;
      ev.failure = make_error(errc::cancelled, "server shutting down");
      t->call->push(std::move(ev));
      curl_slist_free_all(t->headers);
      curl_easy_cleanup(t->easy);
    }
    impl_->to_add.clear();
  }
  curl_multi_cleanup(impl_->multi);
}

std::shared_ptr<upstream_call> http_client::start(http_call_request req,
                                                  boost::asio::any_io_executor ex) {
  auto call = upstream_call::make(std::move(ex));
  auto t = std::make_unique<transfer>();
  t->call = call->channel();
  t->body = std::move(req.body);
  t->easy = curl_easy_init();
  CURL* e = t->easy;
  curl_easy_setopt(e, CURLOPT_URL, req.url.c_str());
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(e, CURLOPT_NOPROXY, "localhost,127.0.0.1,::1");  // never proxy loopback
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, req.connect_timeout_ms);
  if (req.total_timeout_ms > 0) curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, req.total_timeout_ms);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &on_write);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, t.get());
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->curl_error);
  curl_easy_setopt(e, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
  if (req.method == "POST") {
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, t->body.data());
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(t->body.size()));
  } else if (req.method != "GET") {
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, req.method.c_str());
  }
  t->headers = curl_slist_append(t->headers, "Expect:");  // no 100-continue round trip
  for (const auto& h : req.headers) t->headers = curl_slist_append(t->headers, h.c_str());
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->headers);

  std::weak_ptr<impl> weak_self = impl_;
  std::weak_ptr<call_channel> weak = call->channel();
  call->channel()->set_canceller([weak_self, weak] {
    auto self = weak_self.lock();
    if (!self || self->stopping.load()) return;  // the client is gone or going: nothing to cancel
    if (auto c = weak.lock()) {
      {
        std::lock_guard lock(self->mu);
        self->to_cancel.push_back(std::move(c));
      }
      curl_multi_wakeup(self->multi);
    }
  });
  impl_->active.fetch_add(1);
  {
    std::lock_guard lock(impl_->mu);
    impl_->to_add.push_back(std::move(t));
  }
  curl_multi_wakeup(impl_->multi);
  return call;
}

void http_client::abort_all(std::string reason) {
  {
    std::lock_guard lock(impl_->mu);
    impl_->abort_reason = std::move(reason);
  }
  curl_multi_wakeup(impl_->multi);
}

std::size_t http_client::active() const { return impl_->active.load(); }

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
