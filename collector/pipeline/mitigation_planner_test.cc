#include "collector/pipeline/mitigation_planner.h"

#include <gtest/gtest.h>

namespace drip::collector {
namespace {

constexpr int64_t kPlannerNowMs = 1'700'000'000'000;

drip::v1::LeakReport ReportWithHosts(int active_hosts, int hosts_seen) {
  drip::v1::LeakReport r;
  r.set_id("leak-1");
  r.set_component("svc:leaky.service");
  r.set_hosts_seen(hosts_seen);
  for (int i = 0; i < active_hosts; ++i) {
    drip::v1::LeakHost* h = r.add_hosts();
    h->set_host("host-" + std::to_string(i));
    h->set_instance(std::to_string(100 + i) + "@5000");
    h->set_active(true);
    h->set_eta_to_oom_seconds(600.0 * (i + 1));  // host-0 is the most urgent
    h->set_growth_bytes_per_hour(1e9);
  }
  return r;
}

MitigationRequestSpec Spec(std::string action, bool dry_run = false) {
  MitigationRequestSpec s;
  s.action = std::move(action);
  s.dry_run = dry_run;
  return s;
}

TEST(MitigationPlannerTest, NeverActsOnMoreThanTheHostFractionAndMostUrgentFirst) {
  MitigationPolicy policy;
  policy.max_host_fraction = 0.2;
  auto plan =
      PlanMitigation(ReportWithHosts(10, 20), policy, Spec("signal-process"), kPlannerNowMs, 100);
  ASSERT_EQ(plan.targets.size(), 4u);  // 20% of 20 hosts seen
  EXPECT_EQ(plan.targets[0].host, "host-0");
  EXPECT_EQ(plan.targets[0].pid, 100);
  EXPECT_EQ(plan.targets[0].instance, "100@5000");
  EXPECT_EQ(plan.skipped.size(), 6u);
  EXPECT_NE(plan.skipped[0].reason.find("max_host_fraction"), std::string::npos);
}

TEST(MitigationPlannerTest, ATinyFractionStillAllowsOneHost) {
  MitigationPolicy policy;
  policy.max_host_fraction = 0.01;
  auto plan =
      PlanMitigation(ReportWithHosts(3, 3), policy, Spec("restart-unit"), kPlannerNowMs, 100);
  ASSERT_EQ(plan.targets.size(), 1u);
  EXPECT_EQ(plan.targets[0].unit, "leaky.service");
}

TEST(MitigationPlannerTest, HostsActedOnWithinTheCooldownAreSkippedAndUseUpTheFraction) {
  MitigationPolicy policy;
  policy.max_host_fraction = 0.5;
  policy.cooldown = std::chrono::hours(1);
  drip::v1::LeakReport r = ReportWithHosts(4, 4);
  drip::v1::MitigationRecord* m = r.add_mitigations();
  m->set_host("host-0");
  m->set_requested_ms(kPlannerNowMs - 10 * 60 * 1000);
  m->set_outcome("succeeded");
  auto plan = PlanMitigation(r, policy, Spec("signal-process"), kPlannerNowMs, 100);
  ASSERT_EQ(plan.targets.size(), 1u);  // 2 allowed, 1 used by host-0
  EXPECT_EQ(plan.targets[0].host, "host-1");
  // After the cool-down host-0 may be mitigated again.
  m->set_requested_ms(kPlannerNowMs - 2 * 3600 * 1000);
  plan = PlanMitigation(r, policy, Spec("signal-process"), kPlannerNowMs, 100);
  ASSERT_EQ(plan.targets.size(), 2u);
  EXPECT_EQ(plan.targets[0].host, "host-0");
}

TEST(MitigationPlannerTest, DryRunsDoNotCountAgainstRealActions) {
  MitigationPolicy policy;
  policy.max_host_fraction = 1;
  drip::v1::LeakReport r = ReportWithHosts(1, 1);
  drip::v1::MitigationRecord* m = r.add_mitigations();
  m->set_host("host-0");
  m->set_requested_ms(kPlannerNowMs - 1000);
  m->set_dry_run(true);
  m->set_outcome("dry-run");
  EXPECT_EQ(PlanMitigation(r, policy, Spec("signal-process"), kPlannerNowMs, 100).targets.size(),
            1u);
  // On-call's preview is not held back by an automatic dry-run either...
  EXPECT_EQ(
      PlanMitigation(r, policy, Spec("signal-process", true), kPlannerNowMs, 100).targets.size(),
      1u);
  // ...but the next automatic dry-run waits for the cool-down.
  MitigationRequestSpec automatic = Spec("signal-process", true);
  automatic.automatic = true;
  policy.trigger_eta = std::chrono::hours(1);
  EXPECT_TRUE(PlanMitigation(r, policy, automatic, kPlannerNowMs, 100).targets.empty());
}

TEST(MitigationPlannerTest, TheFleetWideBudgetStopsActions) {
  MitigationPolicy policy;
  policy.max_host_fraction = 1;
  auto plan =
      PlanMitigation(ReportWithHosts(5, 5), policy, Spec("signal-process"), kPlannerNowMs, 2);
  EXPECT_EQ(plan.targets.size(), 2u);
  EXPECT_NE(plan.skipped.back().reason.find("max_actions_per_hour"), std::string::npos);
}

TEST(MitigationPlannerTest, AutomaticPoliciesActOnlyBelowTheTriggerEta) {
  MitigationPolicy policy;
  policy.max_host_fraction = 1;
  policy.trigger_eta = std::chrono::seconds(1500);  // host-0 (600 s), host-1 (1200 s)
  MitigationRequestSpec spec = Spec("signal-process");
  spec.automatic = true;
  auto plan = PlanMitigation(ReportWithHosts(5, 5), policy, spec, kPlannerNowMs, 100);
  ASSERT_EQ(plan.targets.size(), 2u);
  EXPECT_TRUE(plan.skipped.empty());  // not urgent is not worth an audit line
}

TEST(MitigationPlannerTest, RecommendationsHaveTheirOwnCooldownAndNoFleetCost) {
  MitigationPolicy policy;
  policy.max_host_fraction = 1;
  drip::v1::LeakReport r = ReportWithHosts(1, 1);
  MitigationRequestSpec spec = Spec("recommend", true);
  spec.automatic = true;
  spec.only_host = "";
  policy.trigger_eta = std::chrono::hours(1);
  EXPECT_EQ(PlanMitigation(r, policy, spec, kPlannerNowMs, 0).targets.size(), 1u);
  drip::v1::MitigationRecord* m = r.add_mitigations();
  m->set_host("host-0");
  m->set_requested_ms(kPlannerNowMs - 1000);
  m->set_dry_run(true);
  m->set_outcome("recommended");
  EXPECT_TRUE(PlanMitigation(r, policy, spec, kPlannerNowMs, 100).targets.empty());
  // ...while a real action is not held back by a recommendation.
  EXPECT_EQ(
      PlanMitigation(r, policy, Spec("signal-process", true), kPlannerNowMs, 100).targets.size(),
      1u);
}

TEST(MitigationPlannerTest, RestartUnitNeedsAServiceAndSignalNeedsAProcess) {
  MitigationPolicy policy;
  drip::v1::LeakReport r = ReportWithHosts(1, 1);
  r.set_component("proc:leaky");
  auto plan = PlanMitigation(r, policy, Spec("restart-unit"), kPlannerNowMs, 100);
  EXPECT_TRUE(plan.targets.empty());
  ASSERT_EQ(plan.skipped.size(), 1u);
  EXPECT_NE(plan.skipped[0].reason.find("not a systemd service"), std::string::npos);
  r.mutable_hosts(0)->set_instance("cg@42");
  plan = PlanMitigation(r, policy, Spec("signal-process"), kPlannerNowMs, 100);
  EXPECT_TRUE(plan.targets.empty());
  EXPECT_NE(plan.skipped[0].reason.find("does not name a process"), std::string::npos);
}

TEST(MitigationPlannerTest, AskingForOneHostNamesWhyItCannot) {
  MitigationPolicy policy;
  drip::v1::LeakReport r = ReportWithHosts(2, 2);
  MitigationRequestSpec spec = Spec("signal-process");
  spec.only_host = "host-1";
  auto plan = PlanMitigation(r, policy, spec, kPlannerNowMs, 100);
  ASSERT_EQ(plan.targets.size(), 1u);
  EXPECT_EQ(plan.targets[0].host, "host-1");
  spec.only_host = "elsewhere";
  plan = PlanMitigation(r, policy, spec, kPlannerNowMs, 100);
  ASSERT_EQ(plan.skipped.size(), 1u);
  EXPECT_NE(plan.skipped[0].reason.find("not one of the report's hosts"), std::string::npos);
  r.mutable_hosts(1)->set_active(false);
  spec.only_host = "host-1";
  plan = PlanMitigation(r, policy, spec, kPlannerNowMs, 100);
  ASSERT_EQ(plan.skipped.size(), 1u);
  EXPECT_NE(plan.skipped[0].reason.find("not suspected"), std::string::npos);
}

}  // namespace
}  // namespace drip::collector
