# setup.bash - the setup and teardown most bats files share, one function
# each, so that a file's own setup_file/setup/teardown says only what is
# particular to it. Sourced by containers.bash (needs its fs_setup,
# fs_cleanup, fs_stop_containers). bats runs the functions named setup_file,
# teardown_file, setup and teardown of the test file itself, so a file
# still defines those, calling these:
#
#   setup_file() { fs_file_setup; }
#   teardown_file() { fs_file_teardown; }
#   setup() { fs_ctrs_setup; }
#   teardown() { fs_ctrs_teardown; }

# fs_file_setup: one temp dir and hook config (fs_setup) for every test of
# the file, exported to the tests (each runs in a process of its own). Not
# root: nothing, and the tests' own checks skip.
fs_file_setup() {
	[ "$(id -u)" = 0 ] || return 0
	fs_setup
	export FS_TMP FS_RUN FS_CONFIG FS_BUNDLE_DIR FLAMESIDECAR_CONFIG
}

# fs_file_teardown: what fs_file_setup made goes (fs_cleanup: containers,
# mounts, the temp dir), if it ran.
fs_file_teardown() {
	[ -n "${FS_TMP:-}" ] || return 0
	fs_cleanup
}

# fs_file_jvm_ok: true when a setup_file can start the Workload JVM in a
# runc container: root, runc, $JAVA17 and the Java workloads built. A
# setup_file returns 0 without starting anything otherwise
# (fs_file_jvm_ok || return 0), and the tests skip on their own checks.
fs_file_jvm_ok() {
	[ "$(id -u)" = 0 ] && command -v runc >/dev/null && [ -x "$JAVA17" ] &&
		[ -d "$FS_BUILD/java/flametest" ]
}

# fs_ctrs_setup: per test of a file set up by fs_file_setup, OUT (the
# test's own temp dir) and CTRS, the runc containers the test starts, empty.
fs_ctrs_setup() {
	OUT="$BATS_TEST_TMPDIR"
	CTRS=()
}

# fs_ctrs_teardown: stop the runc containers named in CTRS.
fs_ctrs_teardown() {
	fs_stop_containers runc "${CTRS[@]}"
}

# fs_test_setup PREFIX [CMD...]: the setup of a test that runs containers of
# its own: skip unless root and runc, jq and each CMD are there, then a
# fresh temp dir and hook config (fs_setup, removed by fs_cleanup in
# teardown) and NAME=PREFIX<pid>-<test number>, a container name no other
# test or parallel run uses (runc names are host-wide).
fs_test_setup() {
	local prefix=$1
	shift
	fs_require_root
	fs_require_cmd runc jq "$@"
	fs_setup
	NAME=$prefix$$-$BATS_TEST_NUMBER
}
