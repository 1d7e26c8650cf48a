# apps.bash - real Java applications from Debian packages in real runc
# containers, profiled by flamesidecar and by the JVM's own JFR over the same
# window, compared with tests/oracle/jfr_compare.py.
# Source after containers.bash:  load ../lib/containers; load ../lib/apps
#
#   app_start NAME KIND [options]   start KIND in container NAME, wait until it
#                                   serves and is registered (needs fs_setup)
#       KIND: jetty (jetty9 + a small webapp under wrk load) | h2 | derby
#             (an embedded SQL engine running tests/oracle/java/oracle/SqlLoad)
#             | big (tests/oracle/java/oracle/BigLoad: the JDK's own javac
#             compiling java.util and java.lang from the JDK's src.zip in a
#             loop, in-process, with H2 and Derby under SqlLoad in the same
#             JVM: tens of thousands of JIT symbols, thousands of code loads
#             in a 20 s window; needs a writable /tmp)
#       --jdk 17|25       Debian's openjdk-17 (default) or Temurin 25
#       --fp              add -XX:+PreserveFramePointer (default: not given)
#       --wrapper         create through build/flamesidecar-runtime (no hooks
#                         in config.json: the wrapper adds them) instead of
#                         runc with our hooks in config.json
#       --shape S         SqlLoad shape: point, scan, write, mixed (default)
#       --path P          jetty URL path under load (default /app/hello)
#       --jvm-opt OPT     one more JVM option (repeatable)
#       --tmp-ro          the container's /tmp is a read-only tmpfs
#   app_profile NAME SECS DIR [--no-jfr] [run options...]
#                                   JFR.start (tests/oracle/oracle.jfc: stack
#                                   samples every 2 ms), `flamesidecar run NAME -d SECS`,
#                                   JFR.stop: DIR/ours.folded, DIR/ours.out,
#                                   DIR/jfr.jfr
#   app_compare DIR [jfr_compare options]  the comparison; on failure (or
#                                   always with FS_KEEP_ARTIFACTS=1) the
#                                   recording and our output are kept under
#                                   $FS_BUILD/test-artifacts/
#   app_tree NAME                   every path in the container's rootfs and
#                                   /tmp (to show nothing was created)

APPS_JAVA_SRC="$FS_TOP/tests/oracle/java"
APPS_CLASSES="$FS_BUILD/oracle-java"
APPS_COMPARE="$FS_TOP/tests/oracle/jfr_compare.py"
APPS_UID=1000

app_java_home() {
	case "$1" in
	25) echo "$JAVA_HOME_25" ;;
	*) echo "$JAVA_HOME_17" ;;
	esac
}

# app_require KIND [--jdk N]: skip what this machine cannot do.
app_require() {
	local kind=$1 jdk=${3:-17}
	fs_require_root
	fs_require_cmd runc jq python3 nsenter setpriv curl
	[ -x "$(app_java_home "$jdk")/bin/java" ] || skip "no JDK $jdk at $(app_java_home "$jdk")"
	[ -x "$JAVA_HOME_17/bin/javac" ] || skip "no javac in $JAVA_HOME_17"
	case "$kind" in
	jetty)
		[ -f /usr/share/jetty9/start.jar ] || skip "jetty9 is not installed"
		[ -f /usr/share/java/servlet-api.jar ] || skip "libservlet-api-java is not installed"
		fs_require_cmd wrk
		;;
	h2) [ -f /usr/share/java/h2.jar ] || skip "libh2-java is not installed" ;;
	derby) [ -f /usr/share/java/derby.jar ] || skip "libderby-java is not installed" ;;
	big)
		[ -f /usr/share/java/h2.jar ] || skip "libh2-java is not installed"
		[ -f /usr/share/java/derby.jar ] || skip "libderby-java is not installed"
		[ -f "$(app_java_home "$jdk")/lib/src.zip" ] ||
			skip "no $(app_java_home "$jdk")/lib/src.zip (openjdk-17-source is not installed)"
		;;
	esac
	[ -x "$FS_SIDECAR" ] || skip "flamesidecar is not built"
	return 0
}

# Compile SqlLoad and the servlet once per build directory.
app_build_java() {
	local stamp="$APPS_CLASSES/.stamp" src
	for src in "$APPS_JAVA_SRC"/oracle/*.java "$FS_TOP/tests/oracle/oracle.jfc" \
		"$FS_TOP/tests/oracle/offcpu.jfc"; do
		[ "$stamp" -nt "$src" ] || { rm -f "$stamp"; break; }
	done
	[ -f "$stamp" ] && return 0
	mkdir -p "$APPS_CLASSES"
	"$JAVA_HOME_17/bin/javac" --release 11 -g -d "$APPS_CLASSES" \
		-cp /usr/share/java/servlet-api.jar "$APPS_JAVA_SRC"/oracle/*.java >&2 &&
		cp "$FS_TOP/tests/oracle/oracle.jfc" "$FS_TOP/tests/oracle/offcpu.jfc" "$APPS_CLASSES/" &&
		touch "$stamp"
}

app_free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The jetty.base of the webapp, inside the rootfs at /srv/jetty-base.
app_jetty_base() {
	local rootfs=$1 port=$2 base="$1/srv/jetty-base"
	mkdir -p "$base/webapps/app/WEB-INF/classes/oracle"
	printf '%s\n' --module=server,http,deploy "jetty.http.host=127.0.0.1" \
		"jetty.http.port=$port" >"$base/start.ini"
	cp "$FS_TOP/tests/oracle/webapp/index.html" "$base/webapps/app/"
	cp "$FS_TOP/tests/oracle/webapp/WEB-INF/web.xml" "$base/webapps/app/WEB-INF/"
	cp "$APPS_CLASSES"/oracle/HelloServlet.class "$base/webapps/app/WEB-INF/classes/oracle/"
	chmod -R a+rX "$rootfs/srv"
}

app_start() {
	local name=$1 kind=$2
	shift 2
	local jdk=17 fp=0 wrapper=0 shape=mixed path=/app/hello tmpro=0 opts=()
	while [ $# -gt 0 ]; do
		case "$1" in
		--jdk) jdk=$2; shift 2 ;;
		--fp) fp=1; shift ;;
		--wrapper) wrapper=1; shift ;;
		--shape) shape=$2; shift 2 ;;
		--path) path=$2; shift 2 ;;
		--jvm-opt) opts+=("$2"); shift 2 ;;
		--tmp-ro) tmpro=1; shift ;;
		*) echo "app_start: unknown option $1" >&2; return 2 ;;
		esac
	done
	app_build_java || return 1
	local java bundle="$FS_TMP/$name" port="" args=() hooks=()
	java="$(app_java_home "$jdk")/bin/java"
	[ "$fp" = 1 ] && opts+=(-XX:+PreserveFramePointer)
	# JFR keeps 64 frames by default: Jetty's stacks are deeper.
	opts+=(-XX:FlightRecorderOptions:stackdepth=1024 -Djava.io.tmpdir=/tmp)
	case "$kind" in
	jetty)
		port=$(app_free_port)
		args=("$java" "${opts[@]}" -Djetty.home=/usr/share/jetty9 -Djetty.base=/srv/jetty-base
			-jar /usr/share/jetty9/start.jar)
		;;
	h2) args=("$java" "${opts[@]}" -cp "/opt/oracle-java:/usr/share/java/h2.jar" oracle.SqlLoad
		"jdbc:h2:mem:oracle;DB_CLOSE_DELAY=-1" "$shape" 2) ;;
	derby) args=("$java" "${opts[@]}" -Dderby.stream.error.file=/dev/null
		-cp "/opt/oracle-java:/usr/share/java/derby.jar" oracle.SqlLoad
		"jdbc:derby:memory:oracle;create=true" "$shape" 2) ;;
	big) args=("$java" "${opts[@]}" -Dderby.stream.error.file=/dev/null
		-cp "/opt/oracle-java:/usr/share/java/h2.jar:/usr/share/java/derby.jar" oracle.BigLoad
		"$(app_java_home "$jdk")/lib/src.zip" /tmp/bigload 1 java.base/java/util java.base/java/lang) ;;
	*) echo "app_start: unknown kind $kind" >&2; return 2 ;;
	esac
	[ "$wrapper" = 1 ] && hooks=(--no-hooks)
	fs_make_bundle "$bundle" "${hooks[@]}" --annotate flamesidecar.io/enable=true -- "${args[@]}"
	[ "$kind" = jetty ] && app_jetty_base "$bundle/rootfs" "$port"
	fs_bundle_set "$bundle" '
		.process.cwd = "/tmp" |
		.mounts += [{destination: "/opt/oracle-java", type: "bind", source: $s, options: ["rbind", "ro"]}] |
		if $ro == 1 then .mounts |= map(if .destination == "/tmp" then .options += ["ro"] else . end) else . end
	' --arg s "$APPS_CLASSES" --argjson ro "$tmpro"
	echo "$port" >"$bundle/port"
	echo "$jdk" >"$bundle/jdk"
	echo "$path" >"$bundle/path"
	if [ "$wrapper" = 1 ]; then
		echo "runc $name" >>"$FS_TMP/containers"
		"$FS_BUILD/flamesidecar-runtime" run -d --bundle "$bundle" "$name" \
			>"$bundle/out.log" 2>&1 </dev/null || { cat "$bundle/out.log" >&2; return 1; }
	else
		fs_runc_run "$name" "$bundle" || { cat "$bundle/out.log" >&2; return 1; }
	fi
	if [ "$kind" = jetty ]; then
		fs_wait_for 90 curl -sf "http://127.0.0.1:$port$path" || {
			cat "$bundle/out.log" >&2
			return 1
		}
	else
		fs_wait_for 90 grep -q READY "$bundle/out.log" || {
			cat "$bundle/out.log" >&2
			return 1
		}
	fi
	fs_wait_for 10 test -f "$FS_RUN/containers/$name.json"
}

# app_jcmd NAME ARGS...: jcmd of the JVM's own JDK, run inside the
# container's mount and pid namespaces as the JVM's user (the attach socket
# lives in the container's /tmp and only that uid may use it).
app_jcmd() {
	local name=$1 pid jdk
	shift
	pid=$(fs_container_pid "$name") || return 1
	jdk=$(cat "$FS_TMP/$name/jdk")
	nsenter -t "$pid" -m -p -- setpriv --reuid=$APPS_UID --regid=$APPS_UID --clear-groups \
		env -i PATH=/usr/bin:/bin HOME=/tmp "$(app_java_home "$jdk")/bin/jcmd" \
		-J-XX:-UsePerfData 1 "$@"
}

# app_load_start NAME SECS: wrk on the jetty container for SECS seconds.
app_load_start() {
	local name=$1 secs=$2 port path
	port=$(cat "$FS_TMP/$name/port")
	[ -n "$port" ] || return 0
	path=$(cat "$FS_TMP/$name/path")
	wrk -t 1 -c 8 -d "${secs}s" "http://127.0.0.1:$port$path" >"$FS_TMP/$name/wrk.out" 2>&1 3>&- &
	echo $! >"$FS_TMP/$name/wrk.pid"
}

app_load_stop() {
	local f="$FS_TMP/$1/wrk.pid"
	[ -f "$f" ] || return 0
	kill "$(cat "$f")" 2>/dev/null || true
	wait "$(cat "$f")" 2>/dev/null || true
	rm -f "$f"
}

app_profile() {
	local name=$1 secs=$2 dir=$3 jfr=1
	shift 3
	if [ "${1:-}" = --no-jfr ]; then jfr=0; shift; fi
	mkdir -p "$dir"
	app_java_home "$(cat "$FS_TMP/$name/jdk")" >"$dir/java_home"
	app_load_start "$name" $((secs + 30))
	# the JIT settles on the load before the window opens
	app_warm "$name"
	if [ "$jfr" = 1 ]; then
		app_jcmd "$name" JFR.start name=oracle settings=/opt/oracle-java/oracle.jfc >"$dir/jfr-start.out" 2>&1 || {
			cat "$dir/jfr-start.out" >&2
			app_load_stop "$name"
			return 1
		}
	fi
	local rc=0
	"$FS_SIDECAR" run "$name" -d "${secs}s" -o "$dir/ours.svg" "$@" >"$dir/ours.out" 2>&1 3>&- || rc=$?
	if [ "$jfr" = 1 ]; then
		app_jcmd "$name" JFR.stop name=oracle filename=/tmp/oracle.jfr >"$dir/jfr-stop.out" 2>&1 &&
			cp "/proc/$(fs_container_pid "$name")/root/tmp/oracle.jfr" "$dir/jfr.jfr" || rc=1
	fi
	app_load_stop "$name"
	cat "$dir/ours.out"
	return $rc
}

# app_warm NAME: let the application run under load until the JVM has
# compiled its hot code (a few seconds of requests or queries).
app_warm() {
	local port
	port=$(cat "$FS_TMP/$1/port")
	if [ -n "$port" ]; then
		fs_wait_for 30 sh -c "grep -q . '$FS_TMP/$1/wrk.pid' && curl -sf http://127.0.0.1:$port/app/index.html"
	fi
	# Not synchronisation: warm-up time for the JIT, the same for every run.
	sleep 5
}

app_compare() {
	local dir=$1 rc=0 jdk
	shift
	jdk=$(cat "$dir/java_home" 2>/dev/null || echo "$JAVA_HOME_17")
	python3 "$APPS_COMPARE" --folded "$dir/ours.folded" --jfr "$dir/jfr.jfr" \
		--jfr-tool "$jdk/bin/jfr" --json "$dir/figures.json" "$@" >"$dir/compare.out" 2>&1 || rc=$?
	cat "$dir/compare.out"
	if [ "$rc" != 0 ] || [ -n "${FS_KEEP_ARTIFACTS:-}" ]; then
		local keep="$FS_BUILD/test-artifacts/oracle-${BATS_TEST_NAME:-manual}-$$"
		mkdir -p "$keep" && cp -r "$dir"/. "$keep"/ 2>/dev/null
		echo "# artifacts kept in $keep" >&2
	fi
	return $rc
}

# app_compare_nojfr DIR [options]: whole/named figures only.
app_compare_nojfr() {
	local dir=$1 rc=0
	shift
	python3 "$APPS_COMPARE" --folded "$dir/ours.folded" --json "$dir/figures.json" "$@" \
		>"$dir/compare.out" 2>&1 || rc=$?
	cat "$dir/compare.out"
	if [ "$rc" != 0 ]; then
		local keep="$FS_BUILD/test-artifacts/oracle-${BATS_TEST_NAME:-manual}-$$"
		mkdir -p "$keep" && cp -r "$dir"/. "$keep"/ 2>/dev/null
		echo "# artifacts kept in $keep" >&2
	fi
	return $rc
}

# app_tree NAME: the container's rootfs and /tmp as the container sees them
# (paths, types, sizes), to compare before and after a profile.
app_tree() {
	local root
	root="/proc/$(fs_container_pid "$1")/root"
	# The read-only binds (host /usr and /etc, our classes, the agent
	# bundle) may sit on the rootfs's own device: prune them by name, or
	# the host's changes to /etc would show up here.
	(cd "$root" && find . -xdev \( -path ./proc -o -path ./sys -o -path ./dev -o -path ./usr \
		-o -path ./etc -o -path ./opt/oracle-java -o -path ./opt/flamesidecar \) -prune \
		-o -printf '%p %y %s\n'
		cd "$root/tmp" && find . -printf 'tmp/%p %y %s\n') | sort
}

# app_figure DIR KEY: one figure of the last comparison.
app_figure() {
	jq -r ".$2" "$1/figures.json"
}
