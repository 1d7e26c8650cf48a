# jvm.bash - the JDKs the integration tests run and the checks that skip a
# test when one is missing. Sourced by containers.bash; a bats file that
# loads containers has these.
#
#   JAVA_HOME_17, JAVA_HOME_25   the JDK homes (override from the environment)
#   JAVA17, JAVA25               their java binaries
#   fs_needs_jvm [JAVA [CLASS]]  skip unless root, runc, jq, the JVM JAVA
#                                (default $JAVA17) and the test workload
#                                flametest.CLASS (default Workload) are there

JAVA_HOME_17=${JAVA_HOME_17:-/usr/lib/jvm/java-17-openjdk-amd64}
JAVA_HOME_25=${JAVA_HOME_25:-/usr/lib/jvm/temurin-25-jdk-amd64}
JAVA17=${JAVA17:-$JAVA_HOME_17/bin/java}
JAVA25=${JAVA25:-$JAVA_HOME_25/bin/java}

fs_needs_jvm() {
	local java=${1:-$JAVA17} class=${2:-Workload}
	fs_require_root
	fs_require_cmd runc jq
	[ -x "$java" ] || skip "no JDK at $java"
	[ -f "$FS_BUILD/java/flametest/$class.class" ] || skip "Java workloads not built (make agent)"
}
