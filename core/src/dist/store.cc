#include "dist/store.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace plexus::dist {
namespace {

enum Op : uint8_t { kSet = 1, kGet = 2, kAdd = 3, kCheck = 4 };
enum Code : uint8_t { kOk = 0, kTimedOut = 1, kBadRequest = 2 };

// Largest key or value a request may carry.
constexpr uint64_t kMaxValue = 64u << 20;

int64_t RemainingMs(absl::Time deadline) {
  const absl::Duration left = deadline - absl::Now();
  return left <= absl::ZeroDuration() ? 0 : absl::ToInt64Milliseconds(left) + 1;
}

// Writes all of `data`; false when the connection is gone.
bool WriteAll(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// Reads exactly n bytes before `deadline` (absl::InfiniteFuture waits for
// ever). 1 on success, 0 when the connection closed or failed, -1 on time out.
int ReadAll(int fd, void* data, size_t n, absl::Time deadline) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    int wait_ms = deadline == absl::InfiniteFuture() ? 1000 : static_cast<int>(std::min<int64_t>(RemainingMs(deadline), 1000));
    if (deadline != absl::InfiniteFuture() && wait_ms <= 0) return -1;
    pollfd pfd{fd, POLLIN, 0};
    int r = ::poll(&pfd, 1, wait_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return 0;
    if (r == 0) continue;
    ssize_t got = ::recv(fd, p, n, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return 0;
    p += got;
    n -= static_cast<size_t>(got);
  }
  return 1;
}

void PutU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint64_t GetU64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

absl::StatusOr<int> OpenSocket(const std::string& host, int port, bool listen, int* bound_port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (listen) hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  const std::string port_str = std::to_string(port);
  int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), port_str.c_str(), &hints, &res);
  if (rc != 0) {
    return absl::InvalidArgumentError(absl::StrCat("store address ", host, ":", port, ": ", gai_strerror(rc)));
  }
  std::string last_error = "no address";
  for (addrinfo* a = res; a != nullptr; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    if (listen) {
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
      if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 128) == 0) {
        sockaddr_storage ss{};
        socklen_t len = sizeof(ss);
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
        *bound_port = ss.ss_family == AF_INET ? ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port)
                                              : ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
        ::freeaddrinfo(res);
        return fd;
      }
    } else if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      ::freeaddrinfo(res);
      return fd;
    }
    last_error = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(res);
  return absl::UnavailableError(
      absl::StrCat(listen ? "cannot listen on " : "cannot connect to the store at ", host, ":", port, ": ",
                   last_error));
}

}  // namespace

// ---- client ----------------------------------------------------------------

absl::StatusOr<std::shared_ptr<TcpStore>> TcpStore::Connect(const std::string& host, int port,
                                                            absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  absl::Status last;
  do {
    int unused = 0;
    absl::StatusOr<int> fd = OpenSocket(host, port, false, &unused);
    if (fd.ok()) return std::shared_ptr<TcpStore>(new TcpStore(*fd, host, port));
    last = fd.status();
    if (last.code() == absl::StatusCode::kInvalidArgument) return last;
    absl::SleepFor(absl::Milliseconds(50));
  } while (absl::Now() < deadline);
  return absl::DeadlineExceededError(
      absl::StrCat("no store answered at ", host, ":", port, " within ", absl::FormatDuration(timeout),
                   " (", last.message(), "); is the launcher or rank 0 running?"));
}

TcpStore::~TcpStore() {
  if (fd_ >= 0) ::close(fd_);
}

std::string TcpStore::Describe() const { return absl::StrCat("the store at ", host_, ":", port_); }

absl::StatusOr<std::pair<uint8_t, std::string>> TcpStore::Call(uint8_t op, const std::string& key,
                                                               const std::string& value, int64_t arg,
                                                               absl::Duration timeout) {
  std::string req;
  req.push_back(static_cast<char>(op));
  PutU64(req, key.size());
  req += key;
  PutU64(req, value.size());
  req += value;
  PutU64(req, static_cast<uint64_t>(arg));
  std::lock_guard<std::mutex> lock(mu_);
  if (fd_ < 0) return absl::UnavailableError(absl::StrCat(Describe(), " is unreachable (connection lost earlier)"));
  auto lost = [&](const char* what) {
    ::close(fd_);
    fd_ = -1;
    return absl::UnavailableError(absl::StrCat(Describe(), " is unreachable: ", what, " (the server exited?)"));
  };
  if (!WriteAll(fd_, req.data(), req.size())) return lost("sending a request failed");
  // The server answers a Get by its deadline; allow a margin for the trip.
  const absl::Time deadline = absl::Now() + timeout + absl::Seconds(5);
  unsigned char head[9];
  int r = ReadAll(fd_, head, sizeof(head), deadline);
  if (r < 0) return lost("no answer in time");
  if (r == 0) return lost("the connection closed");
  const uint64_t n = GetU64(head + 1);
  if (n > kMaxValue) return lost("a malformed answer");
  std::string out(n, '\0');
  if (n > 0 && ReadAll(fd_, out.data(), n, deadline) != 1) return lost("the connection closed");
  return std::make_pair(head[0], std::move(out));
}

absl::Status TcpStore::Set(const std::string& key, const std::string& value) {
  auto r = Call(kSet, key, value, 0, absl::Seconds(30));
  return r.ok() ? absl::OkStatus() : r.status();
}

absl::StatusOr<std::string> TcpStore::Get(const std::string& key, absl::Duration timeout) {
  const int64_t ms = std::max<int64_t>(0, absl::ToInt64Milliseconds(timeout));
  auto r = Call(kGet, key, "", ms, timeout);
  if (!r.ok()) return r.status();
  if (r->first == kTimedOut) {
    return absl::DeadlineExceededError(absl::StrCat("key '", key, "' was not set in ", Describe(), " within ",
                                                    absl::FormatDuration(timeout)));
  }
  return std::move(r->second);
}

absl::StatusOr<int64_t> TcpStore::Add(const std::string& key, int64_t delta) {
  auto r = Call(kAdd, key, "", delta, absl::Seconds(30));
  if (!r.ok()) return r.status();
  if (r->first != kOk) return absl::InvalidArgumentError(absl::StrCat("key '", key, "' does not hold a number"));
  return std::stoll(r->second);
}

absl::StatusOr<bool> TcpStore::Check(const std::string& key) {
  auto r = Call(kCheck, key, "", 0, absl::Seconds(30));
  if (!r.ok()) return r.status();
  return r->second == "1";
}

// ---- server ----------------------------------------------------------------

TcpStoreServer::~TcpStoreServer() { Stop(); }

absl::Status TcpStoreServer::Start(const std::string& host, int port) {
  if (listen_fd_ >= 0) return absl::FailedPreconditionError("the store server is already running");
  absl::StatusOr<int> fd = OpenSocket(host, port, true, &port_);
  if (!fd.ok()) return fd.status();
  listen_fd_ = *fd;
  stopping_ = false;
  accept_thread_ = std::thread([this] { AcceptLoop(); });
  return absl::OkStatus();
}

void TcpStoreServer::Stop() {
  if (listen_fd_ < 0) return;
  stopping_ = true;
  ::shutdown(listen_fd_, SHUT_RDWR);
  if (accept_thread_.joinable()) accept_thread_.join();
  ::close(listen_fd_);
  listen_fd_ = -1;
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : client_fds_) ::shutdown(fd, SHUT_RDWR);
    threads.swap(client_threads_);
  }
  changed_.notify_all();
  for (std::thread& t : threads) t.join();
  std::lock_guard<std::mutex> lock(mu_);
  for (int fd : client_fds_) ::close(fd);
  client_fds_.clear();
}

void TcpStoreServer::AcceptLoop() {
  while (!stopping_) {
    pollfd pfd{listen_fd_, POLLIN, 0};
    int r = ::poll(&pfd, 1, 200);
    if (r <= 0 || stopping_) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    std::lock_guard<std::mutex> lock(mu_);
    client_fds_.push_back(fd);
    client_threads_.emplace_back([this, fd] { Serve(fd); });
  }
}

void TcpStoreServer::Serve(int fd) {
  auto reply = [fd](uint8_t code, const std::string& value) {
    std::string out;
    out.push_back(static_cast<char>(code));
    PutU64(out, value.size());
    out += value;
    return WriteAll(fd, out.data(), out.size());
  };
  while (!stopping_) {
    unsigned char op = 0, len[8];
    if (ReadAll(fd, &op, 1, absl::InfiniteFuture()) != 1) break;
    if (ReadAll(fd, len, 8, absl::InfiniteFuture()) != 1) break;
    uint64_t n = GetU64(len);
    if (n > kMaxValue) break;
    std::string key(n, '\0');
    if (n > 0 && ReadAll(fd, key.data(), n, absl::InfiniteFuture()) != 1) break;
    if (ReadAll(fd, len, 8, absl::InfiniteFuture()) != 1) break;
    n = GetU64(len);
    if (n > kMaxValue) break;
    std::string value(n, '\0');
    if (n > 0 && ReadAll(fd, value.data(), n, absl::InfiniteFuture()) != 1) break;
    unsigned char argb[8];
    if (ReadAll(fd, argb, 8, absl::InfiniteFuture()) != 1) break;
    const int64_t arg = static_cast<int64_t>(GetU64(argb));
    bool ok = true;
    switch (op) {
      case kSet: {
        {
          std::lock_guard<std::mutex> lock(mu_);
          values_[key] = std::move(value);
        }
        changed_.notify_all();
        ok = reply(kOk, "");
        break;
      }
      case kGet: {
        std::unique_lock<std::mutex> lock(mu_);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(arg);
        bool found = changed_.wait_until(lock, deadline, [&] { return stopping_ || values_.count(key) > 0; });
        if (stopping_) return;
        std::string v = found ? values_[key] : std::string();
        lock.unlock();
        ok = reply(found ? kOk : kTimedOut, v);
        break;
      }
      case kAdd: {
        int64_t now = 0;
        bool numeric = true;
        {
          std::lock_guard<std::mutex> lock(mu_);
          auto it = values_.find(key);
          if (it != values_.end()) {
            char* end = nullptr;
            now = std::strtoll(it->second.c_str(), &end, 10);
            numeric = end != nullptr && *end == '\0' && !it->second.empty();
          }
          if (numeric) values_[key] = std::to_string(now += arg);
        }
        changed_.notify_all();
        ok = numeric ? reply(kOk, std::to_string(now)) : reply(kBadRequest, "");
        break;
      }
      case kCheck: {
        bool has;
        {
          std::lock_guard<std::mutex> lock(mu_);
          has = values_.count(key) > 0;
        }
        ok = reply(kOk, has ? "1" : "0");
        break;
      }
      default:
        ok = false;
    }
    if (!ok) break;
  }
  ::shutdown(fd, SHUT_RDWR);
}

}  // namespace plexus::dist
