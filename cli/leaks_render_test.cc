// Rendering tests for the leak report commands (leaks list/show/ack/resolve, mitigate,
// audit) on hand-built protos: what on-call reads, what scripts parse, which exit code a
// mitigation gives.
#include <gtest/gtest.h>
#include <unistd.h>

#include <sstream>

#include "cli/audit_command.h"
#include "cli/exit_codes.h"
#include "cli/leaks_list_command.h"
#include "cli/leaks_show_command.h"
#include "cli/leaks_state_command.h"
#include "cli/mitigate_command.h"
#include "cli/table_printer.h"
#include "cli/terminal_style.h"
#include "nlohmann/json.hpp"

namespace drip::cli {
namespace {

constexpr int64_t kFirstSeenS = 1'700'000'000;
constexpr int64_t kNowMs = (kFirstSeenS + 3 * 3600) * 1000;  // three hours later

drip::v1::LeakReport SampleReport() {
  drip::v1::LeakReport r;
  r.set_id("leak-7");
  r.set_component("svc:api.service");
  r.set_state("open");
  r.set_severity("critical");
  r.set_first_seen_s(kFirstSeenS);
  r.set_last_seen_s(kFirstSeenS + 3 * 3600 - 60);
  r.set_hosts_seen(40);
  r.set_max_growth_bytes_per_hour(4.0 * (1 << 20));
  r.set_min_eta_to_oom_seconds(7.5 * 3600);
  for (int i = 0; i < 2; ++i) {
    auto* h = r.add_hosts();
    h->set_host(i == 0 ? "web-1" : "web-2");
    h->set_instance(i == 0 ? "4242@1699990000" : "77@1699990100");
    h->set_growth_bytes_per_hour((4.0 - i) * (1 << 20));
    if (i == 0) h->set_eta_to_oom_seconds(7.5 * 3600);
    h->set_current_bytes(600u << 20);
    h->set_normal_bytes(500u << 20);
    h->set_first_flagged_s(kFirstSeenS);
    h->set_active(true);
    h->set_rule("climb_above_normal");
    h->set_reason("floor rose steadily");
    h->set_snapshot_state(i == 0 ? "done" : "failed");
    if (i == 1) h->set_snapshot_error("process exited");
  }
  auto* stack = r.add_top_stacks();
  stack->set_verdict("leak");
  stack->set_score(0.69);
  stack->set_live_bytes(38 << 20);
  stack->set_live_allocs(199267);
  stack->set_growth_bytes_per_hour(74.4 * (1 << 20));
  stack->set_stack_id(1);
  stack->set_reason("grew steadily");
  auto* f0 = stack->add_frames();
  f0->set_function("Session::Remember(Request const&)");
  f0->set_module("/usr/bin/app");
  f0->set_file("src/session.cc");
  f0->set_line(88);
  f0->set_module_offset(0x58e08c);
  auto* f1 = stack->add_frames();
  f1->set_function("main");
  f1->set_module("/usr/bin/app");
  r.set_diagnosed_host("web-1");
  r.set_diagnosed_ms(kNowMs - 20 * 60'000);
  r.set_diagnosis_summary("1 leak: Session::Remember");
  r.set_recommended_action("restart-unit");
  r.set_recommendation("web-1 runs out of memory in 7.5 h; a restart frees 100 MiB");
  auto* change = r.add_history();
  change->set_time_ms(kFirstSeenS * 1000);
  change->set_to("open");
  change->set_actor("collector");
  auto* m = r.add_mitigations();
  m->set_command_id("cmd-1");
  m->set_requested_ms(kNowMs - 60'000);
  m->set_host("web-1");
  m->set_action("restart-unit");
  m->set_target("api.service");
  m->set_dry_run(true);
  m->set_outcome("dry-run");
  m->set_actor("alice@laptop");
  return r;
}

drip::v1::AuditEntry Entry(const std::string& id, const std::string& command_id,
                           const std::string& host, const std::string& outcome) {
  drip::v1::AuditEntry e;
  e.set_id(id);
  e.set_time_ms(kNowMs + std::stoll(id) * 1000);
  e.set_actor("alice@laptop via 10.0.0.5");
  e.set_report_id("leak-7");
  e.set_component("svc:api.service");
  e.set_host(host);
  e.set_action("restart-unit");
  e.set_target("api.service");
  e.set_outcome(outcome);
  e.set_command_id(command_id);
  return e;
}

bool HasAnsi(const std::string& text) { return text.find('\033') != std::string::npos; }

// --- leaks list ---

TEST(LeaksListTest, TableShowsEveryColumnOfAReport) {
  drip::v1::ListLeaksResponse response;
  *response.add_reports() = SampleReport();
  std::ostringstream out;
  RenderLeaksList(response, LeaksListOptions(), kNowMs, TerminalStyle(), out);
  const std::string text = out.str();
  for (const char* column : {"ID", "COMPONENT", "STATE", "SEVERITY", "HOSTS", "MAX GROWTH",
                             "MIN ETA", "FIRST SEEN", "TOP FRAME"}) {
    EXPECT_NE(text.find(column), std::string::npos) << column << "\n" << text;
  }
  for (const char* cell :
       {"leak-7", "svc:api.service", "open", "critical", "2/40", "4.0 MiB/h", "7.5 h", "3h ago",
        "Session::Remember(Request const&) (session.cc:88)"}) {
    EXPECT_NE(text.find(cell), std::string::npos) << cell << "\n" << text;
  }
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;
}

TEST(LeaksListTest, UnknownEtaAndNoDiagnosisPrintDashes) {
  drip::v1::ListLeaksResponse response;
  auto* r = response.add_reports();
  *r = SampleReport();
  r->clear_min_eta_to_oom_seconds();
  r->clear_top_stacks();
  std::ostringstream out;
  RenderLeaksList(response, LeaksListOptions(), kNowMs, TerminalStyle(), out);
  const std::string row = out.str().substr(out.str().find('\n') + 1);
  const size_t growth = row.find("4.0 MiB/h");
  ASSERT_NE(growth, std::string::npos) << row;
  const size_t eta = row.find_first_not_of(' ', growth + 9);
  EXPECT_EQ(row.substr(eta, 2), "- ") << row;  // MIN ETA
  ASSERT_GE(row.size(), 4u);
  EXPECT_EQ(row.substr(row.size() - 4), "  -\n") << row;  // TOP FRAME
}

TEST(LeaksListTest, EmptyListSaysSoInOneLineNamingTheFilter) {
  std::ostringstream out;
  RenderLeaksList(drip::v1::ListLeaksResponse(), LeaksListOptions(), kNowMs, TerminalStyle(), out);
  EXPECT_EQ(out.str(),
            "no leak reports that are not resolved (--state all lists resolved ones too)\n");
  std::ostringstream filtered;
  LeaksListOptions options;
  options.state = "acknowledged";
  options.component = "svc:x.service";
  RenderLeaksList(drip::v1::ListLeaksResponse(), options, kNowMs, TerminalStyle(), filtered);
  EXPECT_EQ(filtered.str(), "no leak reports in state acknowledged for component svc:x.service\n");
}

TEST(LeaksListTest, JsonListsFullReportsWithSnakeCaseKeys) {
  drip::v1::ListLeaksResponse response;
  *response.add_reports() = SampleReport();
  std::ostringstream out;
  LeaksListOptions options;
  options.json = true;
  RenderLeaksList(response, options, kNowMs, TerminalStyle(), out);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  const nlohmann::json reports = j["reports"];
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0]["id"], "leak-7");
  EXPECT_EQ(reports[0]["state"], "open");
  EXPECT_EQ(reports[0]["hosts_seen"], 40);
  EXPECT_EQ(reports[0]["first_seen_s"], kFirstSeenS);
  EXPECT_EQ(reports[0]["hosts"].size(), 2u);
}

TEST(LeaksListTest, StateFilterAcceptsTheReportStatesAndNamesTheFlagOtherwise) {
  for (const char* state : {"", "open", "acknowledged", "mitigated", "resolved", "all"}) {
    auto parsed = ParseLeakStateFilter(state);
    ASSERT_TRUE(parsed.ok()) << state;
    EXPECT_EQ(*parsed, state);
  }
  auto bad = ParseLeakStateFilter("closed");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(ExitCodeFor(bad.status()), kExitUsage);
  EXPECT_EQ(std::string(bad.status().message()).rfind("--state: 'closed'", 0), 0u) << bad.status();
}

// --- leaks show ---

TEST(LeaksShowTest, ReportNamesTheLeakingFrameAndTheRecommendedAction) {
  std::ostringstream out;
  RenderLeakReport(SampleReport(), false, kNowMs, TerminalStyle(), out);
  const std::string text = out.str();
  for (const char* expected :
       {"leak-7  svc:api.service\n",
        "state         open\n",
        "severity      critical\n",
        "hosts         2 affected of 40 seen\n",
        "max growth    +4.0 MiB/h\n",
        "shortest ETA  7.5 h\n",
        "first seen    2023-11-14 22:13:20 UTC (3h ago)\n",
        "\nHosts\nHOST",
        "SNAPSHOT\n",
        "failed: process exited",
        "  web-1: floor rose steadily\n",
        "\nLeaking call stacks\n",
        "diagnosed on web-1 at 2023-11-15 00:53:20 UTC (20m ago): 1 leak: Session::Remember\n",
        "#1 leak, stack 1: 38.0 MiB live in 199267 objects, +74.4 MiB/h, score 0.69\n",
        "  #0  Session::Remember(Request const&) (session.cc:88)  [app+0x58e08c]\n",
        "  #1  main  [app+0x0]\n",
        "\nRecommended action\nrestart-unit: web-1 runs out",
        "dripctl mitigate leak-7 --action restart-unit --dry-run",
        "\nMitigations\n",
        "alice@laptop",
        "dry-run",
        "\nHistory\n",
        "collector"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n---\n" << text;
  }
}

TEST(LeaksShowTest, VersionsSayTheLeakCameWithARolloutAndWhichHostsDoNotLeak) {
  drip::v1::LeakReport r = SampleReport();
  r.mutable_hosts(0)->set_version("1.1");
  r.mutable_hosts(0)->set_previous_version("1.0");
  r.mutable_hosts(0)->set_began_at_version_change(true);
  r.mutable_hosts(1)->set_version("1.1");
  drip::v1::RolloutEvidence* rollout = r.mutable_rollout();
  rollout->set_verdict("arrived-with-version");
  rollout->set_version("1.1");
  rollout->set_summary("arrived with version 1.1: 2 of 2 leaking hosts run it");
  auto* share = rollout->add_versions();
  share->set_version("1.1");
  share->set_leaking_hosts(2);
  share->set_began_at_change(1);
  share = rollout->add_versions();
  share->set_version("1.0");
  share->set_healthy_hosts(38);

  std::ostringstream out;
  RenderLeakReport(r, false, kNowMs, TerminalStyle(), out);
  const std::string text = out.str();
  for (const char* expected :
       {"VERSION", "1.1 (was 1.0)", "\nVersions\narrived with version 1.1: 2 of 2 leaking hosts",
        "HOSTS NOT LEAKING"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n---\n" << text;
  }

  std::ostringstream json;
  RenderLeakReport(r, true, kNowMs, TerminalStyle(), json);
  const nlohmann::json j = nlohmann::json::parse(json.str());
  EXPECT_EQ(j["rollout"]["verdict"], "arrived-with-version");
  EXPECT_EQ(j["rollout"]["versions"][1]["healthy_hosts"], 38);
  EXPECT_EQ(j["hosts"][0]["previous_version"], "1.0");
  EXPECT_EQ(j["hosts"][0]["began_at_version_change"], true);
}

TEST(LeaksShowTest, SaysWhenNothingIsDiagnosedYet) {
  drip::v1::LeakReport r = SampleReport();
  r.clear_top_stacks();
  r.clear_mitigations();
  r.clear_recommended_action();
  std::ostringstream out;
  RenderLeakReport(r, false, kNowMs, TerminalStyle(), out);
  EXPECT_NE(out.str().find("no heap snapshot diagnosed yet"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("\nMitigations\nnone\n"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("\nRecommended action\nnone yet\n"), std::string::npos) << out.str();
}

TEST(LeaksShowTest, JsonHasTheReportTheHostsAndTheStacksInDiagnoseShape) {
  std::ostringstream out;
  RenderLeakReport(SampleReport(), true, kNowMs, TerminalStyle(), out);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["id"], "leak-7");
  EXPECT_EQ(j["component"], "svc:api.service");
  EXPECT_EQ(j["state"], "open");
  EXPECT_EQ(j["min_eta_to_oom_seconds"], 7.5 * 3600);
  const nlohmann::json hosts = j["hosts"];
  ASSERT_EQ(hosts.size(), 2u);
  EXPECT_EQ(hosts[0]["host"], "web-1");
  EXPECT_TRUE(hosts[1]["eta_to_oom_seconds"].is_null());
  const nlohmann::json stacks = j["top_stacks"];
  ASSERT_EQ(stacks.size(), 1u);
  EXPECT_EQ(stacks[0]["verdict"], "leak");
  EXPECT_EQ(stacks[0]["live_bytes"], 38 << 20);
  EXPECT_EQ(stacks[0]["frames"][0]["function"], "Session::Remember(Request const&)");
  EXPECT_EQ(stacks[0]["frames"][0]["line"], 88);
  EXPECT_EQ(j["recommended_action"], "restart-unit");
  EXPECT_EQ(j["mitigations"][0]["outcome"], "dry-run");
  EXPECT_EQ(j["history"][0]["actor"], "collector");
  // Every key snake_case: no proto3 JSON camelCase, no integers as strings.
  for (const auto& [key, value] : j.items()) {
    EXPECT_EQ(key.find_first_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ"), std::string::npos) << key;
  }
  EXPECT_TRUE(j["first_seen_s"].is_number_integer());
}

TEST(LeaksShowTest, UnknownVerdictFromANewerCollectorIsReportedNotDropped) {
  drip::v1::LeakReport r = SampleReport();
  r.mutable_top_stacks(0)->set_verdict("zombie");
  std::ostringstream out;
  RenderLeakReport(r, false, kNowMs, TerminalStyle(), out);
  EXPECT_NE(out.str().find("cannot read the stacks"), std::string::npos) << out.str();
  std::ostringstream json;
  RenderLeakReport(r, true, kNowMs, TerminalStyle(), json);
  EXPECT_TRUE(nlohmann::json::parse(json.str()).contains("top_stacks_error"));
}

// --- leaks ack / resolve ---

TEST(LeakStateTest, PrintsTheNewStateInOneLine) {
  drip::v1::LeakReport r = SampleReport();
  r.set_state("acknowledged");
  std::ostringstream out;
  RenderLeakStateChange(r, false, out);
  EXPECT_EQ(out.str(), "leak-7 (svc:api.service) is now acknowledged\n");
  std::ostringstream json;
  RenderLeakStateChange(r, true, json);
  EXPECT_EQ(nlohmann::json::parse(json.str())["state"], "acknowledged");
}

TEST(ReportExitCodeTest, UnknownReportHasItsOwnCodeOtherCodesUnchanged) {
  EXPECT_EQ(ReportExitCodeFor(absl::NotFoundError("no leak-9")), kExitNotFound);
  EXPECT_EQ(ReportExitCodeFor(absl::UnavailableError("down")), kExitUnreachable);
  EXPECT_EQ(ReportExitCodeFor(absl::FailedPreconditionError("resolved")), kExitUsage);
  EXPECT_EQ(ExitCodeFor(absl::NotFoundError("unknown host")), kExitFailure);
}

// --- mitigate ---

TEST(MitigateTest, ExitCodeFollowsTheWorstOutcome) {
  auto outcomes = [](std::initializer_list<const char*> names) {
    std::vector<drip::v1::AuditEntry> v;
    int id = 1;
    for (const char* n : names) v.push_back(Entry(std::to_string(id++), "c", "h", n));
    return v;
  };
  EXPECT_EQ(MitigationExitCode(outcomes({"succeeded"})), kExitOk);
  EXPECT_EQ(MitigationExitCode(outcomes({"succeeded", "dry-run", "recommended"})), kExitOk);
  EXPECT_EQ(MitigationExitCode(outcomes({"succeeded", "failed"})), kExitActionFailed);
  EXPECT_EQ(MitigationExitCode(outcomes({"refused"})), kExitActionFailed);
  EXPECT_EQ(MitigationExitCode(outcomes({"timed-out", "succeeded"})), kExitActionFailed);
  EXPECT_EQ(MitigationExitCode(outcomes({"succeeded", "requested"})), kExitActionPending);
  // A failure outranks a host that has not answered yet.
  EXPECT_EQ(MitigationExitCode(outcomes({"requested", "failed"})), kExitActionFailed);
  EXPECT_EQ(MitigationExitCode(outcomes({"exploded"})), kExitActionFailed);
  EXPECT_EQ(MitigationExitCode({}), kExitActionFailed);
  EXPECT_EQ(OutcomeSummary(outcomes({"succeeded", "requested", "succeeded"})),
            "2 succeeded, 1 still requested");
}

TEST(MitigateTest, SignalParserTakesNamesWithOrWithoutSigAndNumbers) {
  EXPECT_EQ(ParseSignal("SIGTERM").value(), 15);
  EXPECT_EQ(ParseSignal("TERM").value(), 15);
  EXPECT_EQ(ParseSignal("15").value(), 15);
  EXPECT_EQ(ParseSignal("sigkill").value(), 9);
  EXPECT_EQ(ParseSignal("USR1").value(), 10);
  EXPECT_EQ(ParseSignal("HUP").value(), 1);
  // Only what the collector's policy accepts: never job control or faults.
  for (const char* bad : {"", "SIGFOO", "0", "65", "-15", "15x", "SIG", "STOP", "SIGCONT", "11"}) {
    auto parsed = ParseSignal(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(ExitCodeFor(parsed.status()), kExitUsage);
    EXPECT_EQ(std::string(parsed.status().message()).rfind("--signal: ", 0), 0u) << parsed.status();
  }
}

TEST(MitigateTest, ActionMustBeOneThePolicyKnows) {
  EXPECT_TRUE(CheckMitigateAction("restart-unit").ok());
  EXPECT_TRUE(CheckMitigateAction("signal-process").ok());
  EXPECT_TRUE(CheckMitigateAction("recommend").ok());
  absl::Status bad = CheckMitigateAction("reboot");
  EXPECT_EQ(ExitCodeFor(bad), kExitUsage);
  EXPECT_EQ(std::string(bad.message()).rfind("--action: 'reboot'", 0), 0u) << bad;
}

TEST(MitigateTest, FinalOutcomeIsTheLatestLaterEntryOfTheSameCommand) {
  const std::vector<drip::v1::AuditEntry> requested = {
      Entry("0000000010", "cmd-a", "web-1", "requested"),
      Entry("0000000011", "cmd-b", "web-2", "requested"),
      Entry("0000000012", "cmd-c", "web-3", "refused"),
      Entry("0000000013", "", "web-4", "requested")};
  std::vector<drip::v1::AuditEntry> audit = {
      // Newest first, as ListAudit returns them.
      Entry("0000000020", "cmd-a", "web-1", "failed"),
      Entry("0000000018", "cmd-a", "web-1", "succeeded"),
      Entry("0000000017", "cmd-b", "web-2", "requested"),  // not final: still waiting
      Entry("0000000016", "cmd-x", "web-2", "succeeded"),  // another command
      Entry("0000000015", "", "web-4", "succeeded"),       // no command id: cannot match
      Entry("0000000009", "cmd-c", "web-3", "succeeded"),  // before the request: stale
      Entry("0000000013", "", "web-4", "requested"),
      Entry("0000000010", "cmd-a", "web-1", "requested")};
  std::vector<drip::v1::AuditEntry> outcomes = ResolveOutcomes(requested, audit);
  ASSERT_EQ(outcomes.size(), 4u);
  EXPECT_EQ(outcomes[0].outcome(), "failed");  // the last word of cmd-a
  EXPECT_EQ(outcomes[0].id(), "0000000020");
  EXPECT_EQ(outcomes[1].outcome(), "requested");
  EXPECT_EQ(outcomes[2].outcome(), "refused");  // final in Mitigate's answer already
  EXPECT_EQ(outcomes[3].outcome(), "requested");
  EXPECT_EQ(MitigationExitCode(outcomes), kExitActionFailed);

  audit.insert(audit.begin(), Entry("0000000021", "cmd-b", "web-2", "timed-out"));
  EXPECT_EQ(ResolveOutcomes(requested, audit)[1].outcome(), "timed-out");
}

TEST(MitigateTest, LongerIdsAreLaterWhateverTheirPadding) {
  drip::v1::AuditEntry a = Entry("999", "c", "h", "requested");
  drip::v1::AuditEntry b = Entry("1000", "c", "h", "succeeded");
  EXPECT_TRUE(AuditEntryBefore(a, b));
  EXPECT_FALSE(AuditEntryBefore(b, a));
  EXPECT_EQ(ResolveOutcomes({a}, {b})[0].outcome(), "succeeded");
  // Without ids the times decide; an answer in the same millisecond counts.
  a.clear_id();
  b.clear_id();
  b.set_time_ms(a.time_ms());
  EXPECT_EQ(ResolveOutcomes({a}, {b})[0].outcome(), "succeeded");
  b.set_time_ms(a.time_ms() - 1);
  EXPECT_EQ(ResolveOutcomes({a}, {b})[0].outcome(), "requested");
}

TEST(MitigateTest, OutcomeTableAndJson) {
  const std::vector<drip::v1::AuditEntry> outcomes = {Entry("1", "cmd-a", "web-1", "succeeded"),
                                                      Entry("2", "cmd-b", "web-2", "requested")};
  std::ostringstream out;
  RenderMitigationOutcomes("leak-7", outcomes, false, TerminalStyle(), out);
  const std::string text = out.str();
  EXPECT_EQ(text.rfind("HOST   ACTION        TARGET       DRY RUN  OUTCOME    DETAIL\n", 0), 0u)
      << text;
  EXPECT_NE(text.find("web-2  restart-unit  api.service  no       requested  -\n"),
            std::string::npos)
      << text;
  std::ostringstream json;
  RenderMitigationOutcomes("leak-7", outcomes, true, TerminalStyle(), json);
  const nlohmann::json j = nlohmann::json::parse(json.str());
  EXPECT_EQ(j["report_id"], "leak-7");
  EXPECT_EQ(j["pending"], 1);
  EXPECT_EQ(j["entries"][0]["command_id"], "cmd-a");
  EXPECT_EQ(j["entries"][0]["dry_run"], false);
}

// --- audit ---

TEST(AuditTest, TableIsNewestFirstWithIsoTimes) {
  drip::v1::ListAuditResponse response;
  *response.add_entries() = Entry("1", "cmd-a", "web-1", "requested");
  *response.add_entries() = Entry("2", "cmd-a", "web-1", "succeeded");
  std::ostringstream out;
  RenderAudit(response, AuditOptions(), TerminalStyle(), out);
  const std::string text = out.str();
  EXPECT_EQ(text.rfind("TIME (UTC)  ", 0), 0u) << text;
  for (const char* column :
       {"ACTOR", "REPORT", "HOST", "ACTION", "TARGET", "DRY RUN", "OUTCOME", "DETAIL"}) {
    EXPECT_NE(text.find(column), std::string::npos) << column;
  }
  const size_t succeeded = text.find("succeeded");
  const size_t requested = text.find("requested");
  ASSERT_NE(succeeded, std::string::npos);
  EXPECT_LT(succeeded, requested) << text;
  EXPECT_NE(text.find("2023-11-15T01:13:22Z"), std::string::npos) << text;
  EXPECT_NE(text.find("alice@laptop via 10.0.0.5"), std::string::npos) << text;
}

TEST(AuditTest, JsonEntriesHaveSnakeCaseKeys) {
  drip::v1::ListAuditResponse response;
  *response.add_entries() = Entry("1", "cmd-a", "web-1", "requested");
  std::ostringstream out;
  AuditOptions options;
  options.json = true;
  RenderAudit(response, options, TerminalStyle(), out);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  const nlohmann::json entries = j["entries"];
  ASSERT_EQ(entries.size(), 1u);
  for (const char* key : {"id", "time_ms", "actor", "report_id", "component", "host", "action",
                          "target", "dry_run", "outcome", "detail", "command_id"}) {
    EXPECT_TRUE(entries[0].contains(key)) << key;
  }
  EXPECT_EQ(entries[0]["report_id"], "leak-7");
}

TEST(AuditTest, EmptyLogSaysSoAndSinceIsCheckedAndSent) {
  std::ostringstream out;
  AuditOptions for_report;
  for_report.report_id = "leak-7";
  RenderAudit(drip::v1::ListAuditResponse(), for_report, TerminalStyle(), out);
  EXPECT_EQ(out.str(), "no audit entries for report leak-7\n");
  AuditOptions last_day;
  last_day.since_text = "24h";
  last_day.limit = 5;
  auto request = MakeAuditRequest(last_day, kNowMs);
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(request->since_ms(), kNowMs - 24 * 3'600'000);
  EXPECT_EQ(request->limit(), 5u);
  AuditOptions bad_since;
  bad_since.since_text = "yesterday";
  auto bad = MakeAuditRequest(bad_since, kNowMs);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(ExitCodeFor(bad.status()), kExitUsage);
  EXPECT_EQ(std::string(bad.status().message()).rfind("--since: ", 0), 0u) << bad.status();
}

// --- terminal emphasis ---

TEST(TerminalStyleTest, NoEscapeCodesUnlessEnabled) {
  drip::v1::ListLeaksResponse response;
  *response.add_reports() = SampleReport();
  std::ostringstream plain;
  RenderLeaksList(response, LeaksListOptions(), kNowMs, TerminalStyle(), plain);
  EXPECT_FALSE(HasAnsi(plain.str()));
  std::ostringstream report;
  RenderLeakReport(SampleReport(), false, kNowMs, TerminalStyle(), report);
  EXPECT_FALSE(HasAnsi(report.str()));

  std::ostringstream styled;
  RenderLeaksList(response, LeaksListOptions(), kNowMs, TerminalStyle(true), styled);
  EXPECT_TRUE(HasAnsi(styled.str()));
  EXPECT_NE(styled.str().find("\033[1;31mcritical\033[0m"), std::string::npos) << styled.str();
}

TEST(TerminalStyleTest, StdoutOfATestIsNotATerminal) {
  // ctest captures output through a pipe: the style main would pick is plain.
  if (::isatty(STDOUT_FILENO) == 1) GTEST_SKIP() << "stdout is a terminal";
  EXPECT_FALSE(TerminalStyle::ForStdout().enabled());
}

TEST(TerminalStyleTest, EmphasisDoesNotShiftColumns) {
  TablePrinter table({"A", "B"});
  table.AddRow({"critical", "x"});
  table.AlertLastRowCell(0);
  std::ostringstream plain, styled;
  table.Print(plain);
  table.Print(styled, TerminalStyle(true));
  std::string stripped = styled.str();
  for (const char* code : {"\033[1;31m", "\033[1m", "\033[0m"}) {
    for (size_t at; (at = stripped.find(code)) != std::string::npos;) {
      stripped.erase(at, std::string(code).size());
    }
  }
  EXPECT_EQ(stripped, plain.str());
}

}  // namespace
}  // namespace drip::cli
