// The fleet flow on real Debian programs under real load: the collector flags the
// program, has the agent snapshot it in attach mode with the agent's defaults, and the
// diagnosis names the leaking code. Each test's agent may act only on its own program,
// so these run beside the tests of the leaking example (docs/testing.md).
#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

#include "fmt/format.h"
#include "tests/integration/local_drip.h"

namespace drip::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// The fleet flow on a real program: the detector flags (host, component), the collector
// has the agent snapshot it, and the diagnosis (in *diagnosis) ranks a leak first.
// `program_log` goes into the failure message.
void AwaitTheLeakDiagnosed(LocalDrip& drip, const std::string& host, const std::string& component,
                           const std::string& program_log, nlohmann::json* diagnosis) {
  std::string last;
  const nlohmann::json suspect = WaitForSuspect(drip, host, component, seconds(150), &last);
  ASSERT_FALSE(suspect.is_null()) << "no suspect for " << component << " in\n"
                                  << last << drip.Logs() << program_log;
  const nlohmann::json snapshot =
      // Its window may extend itself up to extend_up_to (4 min), then the grace.
      WaitForFinishedSnapshot(drip, host, component, seconds(300), &last);
  ASSERT_FALSE(snapshot.is_null()) << "no finished snapshot in\n" << last << drip.Logs();
  ASSERT_EQ(snapshot["state"], "done") << snapshot.dump(2) << drip.Logs();
  *diagnosis = snapshot["diagnosis"];
  ASSERT_FALSE((*diagnosis)["stacks"].empty()) << snapshot.dump(2);
  ASSERT_EQ((*diagnosis)["stacks"][0]["verdict"], "leak") << diagnosis->dump(2);
}

// A real Debian service linked with jemalloc, under a real client: redis-server with
// redis-cli pushing 4 KiB values onto a list nobody pops (a queue whose consumer died),
// about 2 MB/s. The collector flags it, has the agent snapshot it in attach mode with the
// agent's defaults (sampling period sized from redis's own allocation rate, jemalloc's
// entry points probed), and the diagnosis names a leak in redis's list code.
TEST(RealServicePipelineTest, RedisWithJemallocUnderARealClientIsDiagnosedThroughTheCollector) {
  const std::string server = "/usr/bin/redis-server", client = "/usr/bin/redis-cli";
  ASSERT_EQ(access(server.c_str(), X_OK), 0) << server
                                             << " missing: scripts/install-deps.sh "
                                                "installs redis-server";
  ASSERT_EQ(access(client.c_str(), X_OK), 0) << client << " missing (redis-tools)";
  LocalDrip drip;
  ASSERT_TRUE(drip.StartCollector(std::string(kFastDetectorYaml) + kFastSnapshotsYaml).ok())
      << drip.Logs();
  const std::string host = fmt::format("it-redis-{}", getpid());
  // Only redis may be snapshotted: the agent takes one snapshot at a time, and a sanitized
  // collector, growing by its allocator's quarantine, is flagged too and would hold the
  // agent for up to snapshots.extend_up_to first.
  drip.SetAgentAllowedComponents({"proc:redis-server"});
  ASSERT_TRUE(drip.StartAgent(host, milliseconds(1000)).ok()) << drip.Logs();

  // A unix socket, not a port: nothing to race for, nothing reachable from outside.
  const std::string socket = drip.dir().File("redis.sock");
  auto redis = ChildProcess::Start({server, "--port", "0", "--unixsocket", socket, "--save", "",
                                    "--appendonly", "no", "--dir", drip.dir().path()},
                                   drip.dir().File("redis.log"));
  ASSERT_TRUE(redis.ok()) << redis.status();
  for (int i = 0; i < 100 && access(socket.c_str(), F_OK) != 0; ++i) {
    std::this_thread::sleep_for(milliseconds(50));
  }
  ASSERT_EQ(access(socket.c_str(), F_OK), 0) << (*redis)->Log();
  // redis-cli repeats the command forever (-r -1), every 2 ms.
  auto writer = ChildProcess::Start(
      {client, "-s", socket, "-r", "-1", "-i", "0.002", "RPUSH", "orders", std::string(4096, 'x')},
      drip.dir().File("redis-cli.log"));
  ASSERT_TRUE(writer.ok()) << writer.status();
  auto component = ComponentOfPid((*redis)->pid());
  ASSERT_TRUE(component.ok()) << component.status();
  // Debian's redis-server is a link to redis-check-rdb: named as operators call it.
  EXPECT_EQ(*component, "proc:redis-server");

  nlohmann::json diagnosis;
  AwaitTheLeakDiagnosed(drip, host, *component, (*redis)->Log(), &diagnosis);
  if (HasFatalFailure()) return;
  const nlohmann::json& stacks = diagnosis["stacks"];
  // The leaking stack runs through redis's list push, whatever the allocator frames.
  std::string frames;
  for (const auto& f : stacks[0]["frames"]) frames += f.value("function", "") + "\n";
  EXPECT_NE(frames.find("pushGenericCommand"), std::string::npos) << diagnosis.dump(2);
}

// A real Debian program linked with tcmalloc: SWI-Prolog (swipl links
// libtcmalloc_minimal.so.4) running a session store that asserts a 512-byte fact every
// 2 ms and never retracts one, about 300 KB/s. The collector flags it and has the agent
// snapshot it in attach mode with its defaults (tcmalloc's entry points probed), and the
// diagnosis names the stack that stores the clauses, in libswipl, as the leak.
TEST(RealServicePipelineTest, PrologWithTcmallocThatNeverRetractsIsDiagnosedThroughTheCollector) {
  const std::string swipl = "/usr/bin/swipl";
  ASSERT_EQ(access(swipl.c_str(), X_OK), 0) << swipl
                                            << " missing: scripts/install-deps.sh installs "
                                               "swi-prolog-core";
  LocalDrip drip;
  ASSERT_TRUE(drip.StartCollector(std::string(kFastDetectorYaml) + kFastSnapshotsYaml).ok())
      << drip.Logs();
  const std::string host = fmt::format("it-swipl-{}", getpid());
  drip.SetAgentAllowedComponents({"proc:swipl"});
  ASSERT_TRUE(drip.StartAgent(host, milliseconds(1000)).ok()) << drip.Logs();

  const std::string program = drip.dir().File("sessions.pl");
  WriteFile(program, R"(:- initialization(main, main).
main :- format("ready~n"), flush_output, loop(0).
loop(N) :-
    format(string(Payload), "session-~d-~`xt~512|", [N]),
    assertz(session(N, Payload)),
    sleep(0.002),
    N1 is N + 1,
    loop(N1).
)");
  auto prolog = ChildProcess::Start({swipl, program}, drip.dir().File("swipl.log"));
  ASSERT_TRUE(prolog.ok()) << prolog.status();
  for (int i = 0; i < 200 && (*prolog)->Log().find("ready") == std::string::npos; ++i) {
    std::this_thread::sleep_for(milliseconds(50));
  }
  ASSERT_NE((*prolog)->Log().find("ready"), std::string::npos) << (*prolog)->Log();
  auto component = ComponentOfPid((*prolog)->pid());
  ASSERT_TRUE(component.ok()) << component.status();
  EXPECT_EQ(*component, "proc:swipl");

  nlohmann::json diagnosis;
  AwaitTheLeakDiagnosed(drip, host, *component, (*prolog)->Log(), &diagnosis);
  if (HasFatalFailure()) return;
  const nlohmann::json& stacks = diagnosis["stacks"];
  // Allocator frames (tcmalloc's) are dropped: the leaking stack starts in libswipl.
  ASSERT_FALSE(stacks[0]["frames"].empty()) << diagnosis.dump(2);
  EXPECT_NE(stacks[0]["frames"][0].value("module", "").find("libswipl"), std::string::npos)
      << diagnosis.dump(2);
}

}  // namespace
}  // namespace drip::testing
