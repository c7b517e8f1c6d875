#include "collector/cluster/etcd_client.h"

#include <utility>

#include "fmt/format.h"
#include "grpcpp/grpcpp.h"

namespace drip::collector {
namespace {

bool Unreachable(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::UNAVAILABLE ||
         status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
}

// etcd's range end for "every key starting with prefix": the prefix with its last byte
// incremented (bytes 0xff carried over); "\0" when the prefix is all 0xff.
std::string PrefixEnd(const std::string& prefix) {
  std::string end = prefix;
  while (!end.empty()) {
    auto& last = reinterpret_cast<unsigned char&>(end.back());
    if (last < 0xff) {
      ++last;
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');
}

EtcdKeyValue FromProto(const mvccpb::KeyValue& kv) {
  return EtcdKeyValue{kv.key(), kv.value(), kv.mod_revision(), kv.lease()};
}

}  // namespace

absl::StatusOr<std::unique_ptr<EtcdClient>> EtcdClient::Create(const EtcdOptions& options) {
  if (options.endpoints.empty()) {
    return absl::InvalidArgumentError("cluster.etcd_endpoints: no endpoint");
  }
  std::unique_ptr<EtcdClient> client(new EtcdClient(options));
  for (const std::string& address : options.endpoints) {
    grpc::ChannelArguments args;
    // A channel of its own per endpoint: failing over is this class's choice.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    // etcd's keep-alive and watch streams are long-lived; notice a dead peer.
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10'000);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5'000);
    args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    // A page of a range over the leak reports' prefix may exceed gRPC's 4 MiB default
    // (kPrefixPageKeys reports of up to 1 MiB each): etcd itself sends answers up to 2 GiB.
    args.SetMaxReceiveMessageSize(static_cast<int>(kPrefixPageKeys << 20) + (1 << 20));
    absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
        MakeChannelCredentials(options.tls, &args);
    if (!credentials.ok()) {
      return absl::InvalidArgumentError(
          fmt::format("cluster.tls: {}", std::string(credentials.status().message())));
    }
    Endpoint& endpoint = client->endpoints_.emplace_back();
    endpoint.address = address;
    endpoint.channel = grpc::CreateCustomChannel(address, *credentials, args);
    endpoint.kv = etcdserverpb::KV::NewStub(endpoint.channel);
    endpoint.lease = etcdserverpb::Lease::NewStub(endpoint.channel);
  }
  return client;
}

std::string EtcdClient::current_endpoint() const {
  return endpoints_[current_.load() % endpoints_.size()].address;
}

absl::Status EtcdClient::Call(
    const char* what, const std::function<grpc::Status(Endpoint&, grpc::ClientContext*)>& call) {
  std::string errors;
  for (size_t attempt = 0; attempt < endpoints_.size(); ++attempt) {
    const size_t index = current_.load() % endpoints_.size();
    Endpoint& endpoint = endpoints_[index];
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + options_.timeout);
    const grpc::Status status = call(endpoint, &context);
    if (status.ok()) return absl::OkStatus();
    if (!Unreachable(status)) {
      return absl::Status(
          static_cast<absl::StatusCode>(status.error_code()),
          fmt::format("etcd {} at {}: {}", what, endpoint.address, status.error_message()));
    }
    if (!errors.empty()) errors += "; ";
    errors += fmt::format("{}: {}", endpoint.address, status.error_message());
    // The next call starts where this one found an answer (unless another call moved on
    // first): a dead member costs one timeout, not one per call.
    size_t expected = index;
    current_.compare_exchange_strong(expected, (index + 1) % endpoints_.size());
  }
  return absl::UnavailableError(fmt::format("etcd {}: no endpoint answered ({})", what, errors));
}

absl::StatusOr<int64_t> EtcdClient::GrantLease(std::chrono::seconds ttl) {
  etcdserverpb::LeaseGrantRequest request;
  request.set_ttl(ttl.count());
  etcdserverpb::LeaseGrantResponse response;
  absl::Status status = Call("LeaseGrant", [&](Endpoint& e, grpc::ClientContext* context) {
    return e.lease->LeaseGrant(context, request, &response);
  });
  if (!status.ok()) return status;
  if (!response.error().empty()) {
    return absl::UnavailableError(fmt::format("etcd LeaseGrant: {}", response.error()));
  }
  return response.id();
}

absl::StatusOr<int64_t> EtcdClient::KeepAliveOnce(int64_t lease) {
  etcdserverpb::LeaseKeepAliveResponse response;
  bool answered = false;
  absl::Status status = Call("LeaseKeepAlive", [&](Endpoint& e, grpc::ClientContext* context) {
    auto stream = e.lease->LeaseKeepAlive(context);
    etcdserverpb::LeaseKeepAliveRequest request;
    request.set_id(lease);
    if (stream->Write(request)) answered = stream->Read(&response);
    stream->WritesDone();
    grpc::Status finished = stream->Finish();
    // The stream is ours to end; a read that came back is the answer.
    return answered        ? grpc::Status::OK
           : finished.ok() ? grpc::Status(grpc::StatusCode::UNAVAILABLE, "no keep-alive answer")
                           : finished;
  });
  if (!status.ok()) return status;
  if (response.ttl() <= 0) {
    return absl::NotFoundError(fmt::format("etcd lease {:x} has expired", lease));
  }
  return response.ttl();
}

absl::Status EtcdClient::RevokeLease(int64_t lease) {
  etcdserverpb::LeaseRevokeRequest request;
  request.set_id(lease);
  etcdserverpb::LeaseRevokeResponse response;
  return Call("LeaseRevoke", [&](Endpoint& e, grpc::ClientContext* context) {
    return e.lease->LeaseRevoke(context, request, &response);
  });
}

absl::StatusOr<int64_t> EtcdClient::Put(const std::string& key, const std::string& value,
                                        int64_t lease) {
  etcdserverpb::PutRequest request;
  request.set_key(key);
  request.set_value(value);
  request.set_lease(lease);
  etcdserverpb::PutResponse response;
  absl::Status status = Call("Put", [&](Endpoint& e, grpc::ClientContext* context) {
    return e.kv->Put(context, request, &response);
  });
  if (!status.ok()) return status;
  return response.header().revision();
}

absl::StatusOr<std::vector<EtcdKeyValue>> EtcdClient::GetPrefix(const std::string& prefix,
                                                                int64_t* revision,
                                                                EtcdPrefixLimits limits) {
  etcdserverpb::RangeRequest request;
  request.set_key(prefix);
  request.set_range_end(PrefixEnd(prefix));
  request.set_limit(kPrefixPageKeys);
  std::vector<EtcdKeyValue> out;
  size_t bytes = 0;
  while (true) {
    etcdserverpb::RangeResponse response;
    absl::Status status = Call("Range", [&](Endpoint& e, grpc::ClientContext* context) {
      return e.kv->Range(context, request, &response);
    });
    if (!status.ok()) return status;
    // Every page at the first page's revision: one consistent view of the prefix.
    if (request.revision() == 0) request.set_revision(response.header().revision());
    for (const mvccpb::KeyValue& kv : response.kvs()) {
      bytes += kv.key().size() + kv.value().size();
      if (out.size() >= limits.max_keys || bytes > limits.max_bytes) {
        return absl::ResourceExhaustedError(
            fmt::format("more than {} keys or {} bytes under {} in etcd", limits.max_keys,
                        limits.max_bytes, prefix));
      }
      out.push_back(FromProto(kv));
    }
    if (!response.more() || response.kvs_size() == 0) break;
    // The next page starts just after the last key read.
    request.set_key(response.kvs(response.kvs_size() - 1).key() + std::string(1, '\0'));
  }
  if (revision != nullptr) *revision = request.revision();
  return out;
}

absl::StatusOr<std::optional<EtcdKeyValue>> EtcdClient::Get(const std::string& key) {
  etcdserverpb::RangeRequest request;
  request.set_key(key);
  etcdserverpb::RangeResponse response;
  absl::Status status = Call("Range", [&](Endpoint& e, grpc::ClientContext* context) {
    return e.kv->Range(context, request, &response);
  });
  if (!status.ok()) return status;
  if (response.kvs_size() == 0) return std::optional<EtcdKeyValue>();
  return std::optional<EtcdKeyValue>(FromProto(response.kvs(0)));
}

absl::StatusOr<bool> EtcdClient::CompareAndPut(const std::string& key,
                                               int64_t expected_mod_revision,
                                               const std::string& value, int64_t lease) {
  etcdserverpb::TxnRequest request;
  etcdserverpb::Compare* compare = request.add_compare();
  compare->set_key(key);
  compare->set_target(etcdserverpb::Compare::MOD);
  compare->set_result(etcdserverpb::Compare::EQUAL);
  compare->set_mod_revision(expected_mod_revision);
  etcdserverpb::PutRequest* put = request.add_success()->mutable_request_put();
  put->set_key(key);
  put->set_value(value);
  put->set_lease(lease);
  etcdserverpb::TxnResponse response;
  absl::Status status = Call("Txn", [&](Endpoint& e, grpc::ClientContext* context) {
    return e.kv->Txn(context, request, &response);
  });
  if (!status.ok()) return status;
  return response.succeeded();
}

absl::Status EtcdClient::Delete(const std::string& key) {
  etcdserverpb::DeleteRangeRequest request;
  request.set_key(key);
  etcdserverpb::DeleteRangeResponse response;
  return Call("DeleteRange", [&](Endpoint& e, grpc::ClientContext* context) {
    return e.kv->DeleteRange(context, request, &response);
  });
}

}  // namespace drip::collector
