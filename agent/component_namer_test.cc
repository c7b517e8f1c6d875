#include "agent/component_namer.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "agent/testing/fake_proc_tree.h"

namespace drip::agent {
namespace {

using testing::FakeProcTree;

TEST(ComponentNamerTest, SystemServiceCgroupBecomesSvcComponent) {
  EXPECT_EQ(ComponentNamer::ServiceUnitOf("/system.slice/nginx.service"), "nginx.service");
  EXPECT_EQ(ComponentNamer::ServiceUnitOf("/system.slice/redis-server.service"),
            "redis-server.service");
  EXPECT_EQ(ComponentNamer::ServiceUnitOf("/system.slice/snap.lxd.daemon.service"),
            "snap.lxd.daemon.service");
}

TEST(ComponentNamerTest, TemplateInstancesKeepTheirInstanceName) {
  EXPECT_EQ(ComponentNamer::ServiceUnitOf("/system.slice/system-getty.slice/getty@tty1.service"),
            "getty@tty1.service");
  // systemd's own escaping is part of the unit name, as systemctl shows it.
  EXPECT_EQ(ComponentNamer::ServiceUnitOf("/system.slice/system-systemd\\x2dfsck.slice/"
                                          "systemd-fsck@dev-disk-by\\x2duuid-0a1b.service"),
            "systemd-fsck@dev-disk-by\\x2duuid-0a1b.service");
}

// A user's own services are not system services: a local user must not be able to pose
// as one (a leaking user unit called sshd.service would get the host's sshd restarted,
// and pass the snapshot allow-list for the root agent to parse the user's files).
TEST(ComponentNamerTest, AUsersServiceIsNeverNamedAsASystemService) {
  EXPECT_EQ(ComponentNamer::ServiceUnitOf(
                "/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service"),
            "");
  EXPECT_EQ(ComponentNamer::ServiceUnitOf("/user.slice/user-1000.slice/user@1000.service/"
                                          "app.slice/sshd.service"),
            "");
  EXPECT_EQ(ComponentNamer::ServiceUnitOf("/user.slice/user-1000.slice/user@1000.service"), "");
  // Nor are the services of a container's own systemd the host's.
  EXPECT_EQ(ComponentNamer::ServiceUnitOf(
                "/machine.slice/machine-web.scope/payload/system.slice/nginx.service"),
            "");
  EXPECT_EQ(
      ComponentNamer::ServiceUnitOf("/system.slice/lxc.service/ct1/system.slice/sshd.service"),
      "lxc.service");
}

// A user's processes have a namespace of their own: the guard's default allow-list
// (svc:*) and any proc:* pattern leave them alone unless user: is named.
TEST(ComponentNamerTest, AUsersProcessesAreInTheUsersOwnNamespace) {
  EXPECT_EQ(
      ComponentNamer::ComponentFromNames(
          "/user.slice/user-1000.slice/user@1000.service/app.slice/sshd.service", "sshd", "sshd"),
      "user:1000:sshd.service");
  EXPECT_EQ(ComponentNamer::ComponentFromNames("/user.slice/user-1000.slice/user@1000.service/"
                                               "app.slice/app-gnome-firefox-4242.scope",
                                               "firefox", "firefox"),
            "user:1000:firefox");
  EXPECT_EQ(ComponentNamer::ComponentFromNames(
                "/user.slice/user-1000.slice/user@1000.service/init.scope", "systemd", "systemd"),
            "user:1000:systemd");
  // A login session is not the user's manager: its programs are named as any program.
  EXPECT_EQ(ComponentNamer::ComponentFromNames("/user.slice/user-1000.slice/session-3.scope",
                                               "bash", "bash"),
            "proc:bash");
  EXPECT_EQ(ComponentNamer::ComponentFromNames("/system.slice/nginx.service", "nginx", "nginx"),
            "svc:nginx.service");
  EXPECT_FALSE(ComponentNamer::UserUnitOf("/system.slice/user@x.service/a.service").has_value());
}

TEST(ComponentNamerTest, DelegatedSubCgroupOfAServiceBelongsToTheService) {
  EXPECT_EQ(ComponentNamer::ServiceUnitOf("/system.slice/nginx.service/worker"), "nginx.service");
  EXPECT_EQ(ComponentNamer::ServiceUnitOf("/system.slice/containerd.service/payload/a/b"),
            "containerd.service");
}

TEST(ComponentNamerTest, ScopesAreNotServices) {
  // Login sessions.
  EXPECT_EQ(ComponentNamer::ServiceUnitOf("/user.slice/user-1000.slice/session-3.scope"), "");
  // Docker and Kubernetes containers with the systemd cgroup driver.
  EXPECT_EQ(ComponentNamer::ServiceUnitOf("/system.slice/docker-4f9c0e1d2b3a.scope"), "");
  EXPECT_EQ(ComponentNamer::ServiceUnitOf(
                "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod12ab.slice/"
                "cri-containerd-9f8e7d.scope"),
            "");
  // The user manager itself and desktop apps launched as scopes.
  EXPECT_EQ(
      ComponentNamer::ServiceUnitOf("/user.slice/user-1000.slice/user@1000.service/init.scope"),
      "");
  EXPECT_EQ(ComponentNamer::ServiceUnitOf("/user.slice/user-1000.slice/user@1000.service/"
                                          "app.slice/app-gnome-firefox-4242.scope"),
            "");
  // PID 1 and virtual machines.
  EXPECT_EQ(ComponentNamer::ServiceUnitOf("/init.scope"), "");
  EXPECT_EQ(ComponentNamer::ServiceUnitOf("/machine.slice/machine-qemu\\x2d1\\x2dvm.scope/libvirt"),
            "");
}

TEST(ComponentNamerTest, PathsWithoutAUnitAreNotServices) {
  EXPECT_EQ(ComponentNamer::ServiceUnitOf(""), "");
  EXPECT_EQ(ComponentNamer::ServiceUnitOf("/"), "");
  EXPECT_EQ(ComponentNamer::ServiceUnitOf("/system.slice"), "");
  EXPECT_EQ(ComponentNamer::ServiceUnitOf("/user.slice/user-1000.slice"), "");
  // cgroupfs driver (no systemd) and bare cgroup namespaces.
  EXPECT_EQ(ComponentNamer::ServiceUnitOf("/docker/4f9c0e1d2b3a"), "");
  EXPECT_EQ(ComponentNamer::ServiceUnitOf("/kubepods/burstable/pod12ab/9f8e7d"), "");
  EXPECT_EQ(ComponentNamer::ServiceUnitOf("/.."), "");
  EXPECT_EQ(ComponentNamer::ServiceUnitOf("/.service"), "");
}

TEST(ComponentNamerTest, ServiceInsideAContainerIsFoundFromTheHostView) {
  // LXC/systemd-nspawn containers run their own systemd under the host's tree.
  EXPECT_EQ(ComponentNamer::ServiceUnitOf("/lxc.payload.web1/system.slice/nginx.service"),
            "nginx.service");
  // The container's cgroup path as seen from inside a cgroup namespace.
  EXPECT_EQ(ComponentNamer::ServiceUnitOf("/../../system.slice/nginx.service"), "nginx.service");
}

TEST(ComponentNamerTest, ExecutableNameIsTheBasenameWithoutDeleted) {
  EXPECT_EQ(ComponentNamer::ExecutableName("/usr/sbin/nginx"), "nginx");
  EXPECT_EQ(ComponentNamer::ExecutableName("/usr/bin/python3.11 (deleted)"), "python3.11");
  EXPECT_EQ(ComponentNamer::ExecutableName("/memfd:runner (deleted)"), "memfd:runner");
  EXPECT_EQ(ComponentNamer::ExecutableName("relative"), "relative");
}

TEST(ComponentNamerTest, InvalidUtf8IsReplacedAndValidUtf8Kept) {
  EXPECT_EQ(ComponentNamer::ToValidUtf8("nginx"), "nginx");
  EXPECT_EQ(ComponentNamer::ToValidUtf8("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(ComponentNamer::ToValidUtf8("\xe2\x82\xac-euro"), "\xe2\x82\xac-euro");
  EXPECT_EQ(ComponentNamer::ToValidUtf8("bad\xff"
                                        "byte"),
            "bad?byte");
  EXPECT_EQ(ComponentNamer::ToValidUtf8("cut\xc3"), "cut?");
  EXPECT_EQ(ComponentNamer::ToValidUtf8("overlong\xc0\xaf"), "overlong??");
  EXPECT_EQ(ComponentNamer::ToValidUtf8("surrogate\xed\xa0\x80"), "surrogate???");
}

TEST(ComponentNamerTest, ProcessOutsideAServiceIsNamedByItsExecutable) {
  FakeProcTree tree;
  tree.AddProcess({.pid = 4242, .comm = "redis-serv", .exe = "/usr/bin/redis-server"});
  ComponentNamer namer(tree.root());
  EXPECT_EQ(namer.ComponentOf(4242, "/user.slice/user-1000.slice/session-3.scope", "redis-serv"),
            "proc:redis-server");
  EXPECT_EQ(namer.ComponentOf(4242, "/system.slice/redis.service", "redis-serv"),
            "svc:redis.service");
}

TEST(ComponentNamerTest, UnreadableExecutableFallsBackToComm) {
  FakeProcTree tree;
  tree.AddProcess({.pid = 77, .comm = "my worker"});  // no exe link
  ComponentNamer namer(tree.root());
  EXPECT_EQ(namer.ComponentOf(77, "/", "my worker"), "proc:my worker");
  EXPECT_EQ(namer.ComponentOf(78, "", ""), "proc:unknown");
}

// Debian's redis-server is a link to redis-check-rdb: the program runs as (and comm, ps
// and the unit say) redis-server. A link of that name beside the executable, to the same
// file, is what makes comm the name.
TEST(ComponentNamerTest, ProgramStartedThroughALinkIsNamedByTheLink) {
  FakeProcTree tree;
  tree.AddProcess({.pid = 4343, .comm = "redis-server", .exe = "/usr/bin/redis-check-rdb"});
  tree.WriteFile("4343/root/usr/bin/redis-check-rdb", "ELF");
  std::filesystem::create_symlink("redis-check-rdb",
                                  tree.root() + "/4343/root/usr/bin/redis-server");
  ComponentNamer namer(tree.root());
  const char* session = "/user.slice/user-1000.slice/session-3.scope";
  EXPECT_EQ(namer.ComponentOf(4343, session, "redis-server"), "proc:redis-server");
  // The BPF sampler's names: the kernel gives the executable's basename.
  EXPECT_EQ(namer.ComponentOfTask(4343, session, "redis-check-rdb", "redis-server"),
            "proc:redis-server");
  // Exited before it could be looked at: the executable's name.
  EXPECT_EQ(namer.ComponentOfTask(4344, session, "redis-check-rdb", "redis-server"),
            "proc:redis-check-rdb");
}

// A process that renamed itself (prctl, setproctitle) keeps its executable's name: a
// worker's own name would split one program into as many components as it has names.
TEST(ComponentNamerTest, ProcessThatRenamedItselfKeepsItsExecutableName) {
  FakeProcTree tree;
  tree.AddProcess({.pid = 500, .comm = "worker-3", .exe = "/usr/bin/python3.11"});
  tree.WriteFile("500/root/usr/bin/python3.11", "ELF");
  tree.AddProcess({.pid = 501, .comm = "python3", .exe = "/usr/bin/python3.11"});
  tree.WriteFile("501/root/usr/bin/python3.11", "ELF");
  std::filesystem::create_symlink("python3.11", tree.root() + "/501/root/usr/bin/python3");
  ComponentNamer namer(tree.root());
  EXPECT_EQ(namer.ComponentOf(500, "/", "worker-3"), "proc:python3.11");
  EXPECT_EQ(namer.ComponentOfTask(500, "/", "python3.11", "worker-3"), "proc:python3.11");
  // comm the start of the executable's name: the executable's full name, as before.
  EXPECT_EQ(namer.ComponentOf(501, "/", "python3"), "proc:python3.11");
}

}  // namespace
}  // namespace drip::agent
