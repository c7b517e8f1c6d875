// EtcdClient: the collectors' way to etcd's v3 API (KV and Lease), over gRPC with the
// client generated at build time from etcd's own protos (proto/etcd/). Several
// collectors share a fleet through etcd (docs/cluster.md): each registers under a lease
// that it refreshes (ClusterMembership), members read each other's records by prefix, and
// a component's leak report is written by compare-and-swap (ReportOwnership). Nothing is
// watched: every reader polls on its own round, which bounds what etcd must push.
//
// Endpoints are tried in order; a call that finds one unreachable (UNAVAILABLE, or past
// its deadline) moves on to the next and stays there, so a dead etcd member costs one
// timeout, not one per call. Every call has a deadline (`timeout`). Errors come back as
// absl::Status with the endpoint and the etcd call named; UNAVAILABLE means no endpoint
// answered.
//
// Thread-safe: calls may come from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/rpc/tls_settings.h"
#include "etcd/etcdserver/etcdserverpb/rpc.grpc.pb.h"

namespace drip::collector {

struct EtcdOptions {
  std::vector<std::string> endpoints;  // host:port, tried in order
  TlsSettings tls;                     // plaintext, or the client certificate etcd wants
  std::chrono::milliseconds timeout = std::chrono::seconds(5);
};

// One key as etcd holds it.
struct EtcdKeyValue {
  std::string key;
  std::string value;
  int64_t mod_revision = 0;
  int64_t lease = 0;
};

// What one EtcdClient::GetPrefix may read.
struct EtcdPrefixLimits {
  size_t max_keys = 10'000;
  size_t max_bytes = 64u << 20;
};

class EtcdClient {
 public:
  // Builds the channels; connects lazily. INVALID_ARGUMENT for no endpoint or TLS files
  // that cannot be read.
  static absl::StatusOr<std::unique_ptr<EtcdClient>> Create(const EtcdOptions& options);

  // A lease of `ttl` (etcd may grant a longer one); its id.
  absl::StatusOr<int64_t> GrantLease(std::chrono::seconds ttl);
  // Refreshes `lease` once; its remaining TTL in seconds, NOT_FOUND when it expired.
  absl::StatusOr<int64_t> KeepAliveOnce(int64_t lease);
  absl::Status RevokeLease(int64_t lease);

  // Puts `value` at `key` (attached to `lease` unless 0); the store's revision after it.
  absl::StatusOr<int64_t> Put(const std::string& key, const std::string& value, int64_t lease = 0);
  // Every key under `prefix`, in key order, and the revision they were read at. Read in
  // pages of kPrefixPageKeys at one revision, so that no answer is larger than a page of
  // values; RESOURCE_EXHAUSTED once more than `max_keys` keys or `max_bytes` of keys and
  // values are found: what is read from etcd is bounded, whoever wrote it.
  static constexpr int64_t kPrefixPageKeys = 64;
  absl::StatusOr<std::vector<EtcdKeyValue>> GetPrefix(const std::string& prefix,
                                                      int64_t* revision = nullptr,
                                                      EtcdPrefixLimits limits = {});
  // The key, or nullopt when absent.
  absl::StatusOr<std::optional<EtcdKeyValue>> Get(const std::string& key);
  // Puts `value` at `key` only if the key's mod revision is still `expected_mod_revision`
  // (0: the key must not exist). Returns whether it did: a compare-and-swap, so that two
  // members writing one report cannot overwrite each other unseen.
  absl::StatusOr<bool> CompareAndPut(const std::string& key, int64_t expected_mod_revision,
                                     const std::string& value, int64_t lease = 0);
  absl::Status Delete(const std::string& key);

  // The endpoint calls currently go to.
  std::string current_endpoint() const;

  std::chrono::milliseconds timeout() const { return options_.timeout; }

 private:
  struct Endpoint {
    std::string address;
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<etcdserverpb::KV::Stub> kv;
    std::unique_ptr<etcdserverpb::Lease::Stub> lease;
  };

  explicit EtcdClient(EtcdOptions options) : options_(std::move(options)) {}

  // Runs `call(endpoint, context)` on the current endpoint, failing over on
  // UNAVAILABLE or DEADLINE_EXCEEDED until every endpoint was tried once.
  absl::Status Call(const char* what,
                    const std::function<grpc::Status(Endpoint&, grpc::ClientContext*)>& call);

  const EtcdOptions options_;
  std::vector<Endpoint> endpoints_;
  std::atomic<size_t> current_{0};
};

}  // namespace drip::collector
