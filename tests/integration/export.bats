#!/usr/bin/env bats
# pprof and speedscope output (run --pprof/--speedscope, convert), checked by
# the formats' own readers: `go tool pprof` (golang-go) and speedscope (npm
# package, in headless Chromium). A real runc container runs the Workload JVM.

load ../lib/containers

FIX="$FS_TOP/tests/fixtures/export"
PF="$FS_TOP/tests/lib/pprof_folded.py"
# where tests/install-deps.sh installs the speedscope npm package
SPEEDSCOPE_DIR=${FS_SPEEDSCOPE_CACHE:-/var/cache/flamesidecar-tests/npm}/node_modules/speedscope/dist/release

needs_go() {
	command -v go >/dev/null || skip "go (golang-go) is not installed"
	command -v python3 >/dev/null || skip "python3 is not installed"
}

pprof() {
	go tool pprof "$@" 2>/dev/null
}

# folded_sorted FILE: the folded stacks, equal stacks summed, C-sorted.
folded_sorted() {
	awk '{ c = $NF; sub(/ [^ ]*$/, ""); n[$0] += c } END { for (s in n) print s, n[s] }' "$1" |
		LC_ALL=C sort
}

# strip_kinds: names as pprof -traces shows them (no _[k] _[j] _[1] _[0]
# suffix; _[i] stays, the traces reader puts it back from "(inline)").
strip_kinds() {
	sed -E 's/_\[[kj01]\](;| )/\1/g; s/_\[[kj01]\](;| )/\1/g' |
		# and pprof drops the argument list of C++ names (Class::method(args))
		sed -E ':a; s/((^|;)[^;(]*::[^;(]*)\([^;]*\)(;| [0-9]+$)/\1\3/; ta' |
		awk '{ c = $NF; sub(/ [^ ]*$/, ""); n[$0] += c } END { for (s in n) print s, n[s] }' |
		LC_ALL=C sort
}

# speedscope_folded JSON: folded stacks back from a speedscope file (every
# profile), the kind suffix rebuilt from each frame's "file".
speedscope_folded() {
	jq -r '
		def suffix: if .file == "[jit]" then "_[j]" elif .file == "[c1]" then "_[1]"
			elif .file == "[interpreted]" then "_[0]" elif .file == "[inlined]" then "_[i]"
			elif .file == "[kernel.kallsyms]" then "_[k]" else "" end;
		(.shared.frames | map(.name + suffix)) as $f
		| .profiles[] | [.samples, .weights] | transpose[]
		| "\(.[0] | map($f[.]) | join(";")) \(.[1])"' "$1" |
		awk '{ c = $NF; sub(/ [^ ]*$/, ""); n[$0] += c } END { for (s in n) print s, n[s] }' |
		LC_ALL=C sort
}

needs_jvm() {
	fs_needs_jvm "$JAVA17" Workload
	[ -n "${MAIN:-}" ] || skip "the workload container did not start"
}

setup_file() {
	fs_file_jvm_ok || return 0
	fs_file_setup
	MAIN="fsexport-pprof-$$"
	local dir="$FS_TMP/$MAIN"
	# annotated as containerd's CRI plugin does, so that the registry has
	# pod, namespace and container names for the labels
	fs_make_bundle "$dir" --annotate flamesidecar.io/enable=true \
		--annotate io.kubernetes.cri.container-type=container \
		--annotate io.kubernetes.cri.sandbox-name=checkout-7d9f \
		--annotate io.kubernetes.cri.sandbox-namespace=shop \
		--annotate io.kubernetes.cri.container-name=app --mount "$FS_BUILD/java:/opt/fsjava" -- \
		"$JAVA17" -XX:+PreserveFramePointer -cp /opt/fsjava flametest.Workload --threads 2
	fs_runc_run "$MAIN" "$dir"
	fs_wait_for 60 grep -q READY "$dir/out.log" || { cat "$dir/out.log" >&2; return 1; }
	fs_wait_for 10 test -f "$FS_RUN/containers/$MAIN.json"
	export MAIN
	# one profile of the workload, shared by the tests below
	(cd "$FS_TMP" && "$FS_SIDECAR" run "$MAIN" -d 4s -F 199 -o main.svg --pprof main.pb.gz \
		--speedscope main.speedscope.json >main.summary 2>&1) || {
		cat "$FS_TMP/main.summary" >&2
		return 1
	}
}

teardown_file() { fs_file_teardown; }

setup() {
	OUT="$BATS_TEST_TMPDIR"
}

# ---- convert -----------------------------------------------------------------

@test "convert --help: usage with examples; bad command lines exit 2" {
	run "$FS_SIDECAR" convert --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"Examples:"* && "$output" == *"--pprof"* && "$output" == *"--speedscope"* ]]
	run "$FS_SIDECAR" convert "$FIX/kinds.folded"
	[ "$status" -eq 2 ]
	[[ "$output" == *"nothing to write"* ]]
	run "$FS_SIDECAR" convert --pprof - --speedscope - "$FIX/kinds.folded"
	[ "$status" -eq 2 ]
	run "$FS_SIDECAR" convert -F 0 --pprof x "$FIX/kinds.folded"
	[ "$status" -eq 2 ]
	run "$FS_SIDECAR" convert --pprof "$OUT/x.pb.gz" "$OUT/missing.folded"
	[ "$status" -eq 1 ]
	[[ "$output" == *"missing.folded"* ]]
	printf 'not folded\n' >"$OUT/bad.folded"
	run "$FS_SIDECAR" convert --pprof "$OUT/x.pb.gz" "$OUT/bad.folded"
	[ "$status" -eq 1 ]
	[[ "$output" == *"line 1"* ]]
	[ ! -e "$OUT/x.pb.gz" ]
}

@test "convert: go tool pprof -raw gives back every folded stack and count exactly" {
	needs_go
	"$FS_SIDECAR" convert --process-root --pprof "$OUT/k.pb.gz" "$FIX/kinds.folded"
	gzip -t "$OUT/k.pb.gz"
	pprof -raw "$OUT/k.pb.gz" | python3 "$PF" raw >"$OUT/got"
	folded_sorted "$FIX/kinds.folded" >"$OUT/want"
	diff -u "$OUT/want" "$OUT/got"
}

@test "convert: go tool pprof -traces reproduces the stacks (names without kind suffix, inlined frames marked)" {
	needs_go
	"$FS_SIDECAR" convert --pprof "$OUT/k.pb.gz" "$FIX/kinds.folded"
	pprof -traces -sample_index=samples "$OUT/k.pb.gz" | python3 "$PF" traces >"$OUT/got"
	strip_kinds <"$FIX/kinds.folded" >"$OUT/want"
	diff -u "$OUT/want" "$OUT/got"
	# the kinds are in the mappings; C1/JIT/interpreted of one method are one function
	pprof -raw "$OUT/k.pb.gz" >"$OUT/raw"
	for m in '\[kernel.kallsyms\]' 'libc.so.6' 'libjvm.so' '\[jit\]' '\[c1\]' '\[interpreted\]'; do
		grep -Eq "^[0-9]+: 0x0/0x0/0x0 $m " "$OUT/raw" || { echo "no mapping $m"; false; }
	done
	# hotMethod: 700 inlined + 50 compiled = 750 of 1101, first by flat
	run pprof -top -sample_index=samples "$OUT/k.pb.gz"
	echo "$output"
	local first
	first=$(awk '/flat%/ { getline; print; exit }' <<<"$output")
	[[ "$first" =~ ^\ +750\ +68\.12%.*flametest\.Workload\.hotMethod ]]
	[[ "$output" == *"of 1101 total"* ]]
}

@test "convert: stackcollapse-perf.pl output (collapse fixtures) converts with the same total" {
	needs_go
	local f
	for f in "$FS_TOP"/tests/fixtures/collapse/real-dd.default.folded \
		"$FS_TOP"/tests/fixtures/render/java.folded; do
		"$FS_SIDECAR" convert --pprof "$OUT/c.pb.gz" --speedscope "$OUT/c.json" "$f"
		pprof -raw "$OUT/c.pb.gz" | python3 "$PF" raw >"$OUT/got"
		folded_sorted "$f" >"$OUT/want"
		diff -u "$OUT/want" "$OUT/got"
		speedscope_folded "$OUT/c.json" >"$OUT/got2"
		diff -u "$OUT/want" "$OUT/got2"
	done
}

@test "convert: the speedscope file follows speedscope's published schema" {
	[ -f "$SPEEDSCOPE_DIR/file-format-schema.json" ] || skip "speedscope npm package not installed"
	python3 -c 'import jsonschema' 2>/dev/null || skip "python3-jsonschema not installed"
	"$FS_SIDECAR" convert --process-root --title 'kinds fixture' --speedscope "$OUT/k.json" \
		"$FIX/kinds.folded"
	python3 - "$SPEEDSCOPE_DIR/file-format-schema.json" "$OUT/k.json" <<'PY'
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.validate(json.load(open(sys.argv[2])), schema)
PY
	# one profile per process (the root frame), the largest first
	[ "$(jq -r '[.profiles[].name] | join(",")' "$OUT/k.json")" = "java,GC Thread#0,perf-exec" ]
	speedscope_folded "$OUT/k.json" >"$OUT/got"
	folded_sorted "$FIX/kinds.folded" >"$OUT/want"
	diff -u "$OUT/want" "$OUT/got"
}

@test "convert: -diff_base between two of our profiles shows what changed" {
	needs_go
	"$FS_SIDECAR" convert --pprof "$OUT/a.pb.gz" "$FS_TOP/tests/fixtures/render/diff_a.folded"
	"$FS_SIDECAR" convert --pprof "$OUT/b.pb.gz" "$FS_TOP/tests/fixtures/render/diff_b.folded"
	run pprof -top -sample_index=samples -diff_base "$OUT/a.pb.gz" "$OUT/b.pb.gz"
	echo "$output"
	[ "$status" -eq 0 ]
	# expected flat deltas per leaf, from the fixtures themselves
	local leaf want got
	while read -r leaf want; do
		got=$(awk -v f="$leaf" '{ l = $0; sub(/ \((partial-)?inline\)$/, "", l);
			n = split(l, w, " "); if (w[n] == f && w[1] ~ /^-?[0-9]+$/) print w[1] }' <<<"$output")
		[ "${got:-0}" = "$want" ] || { echo "$leaf: want $want got $got"; false; }
	done < <(awk '{ c = $NF; sub(/ [^ ]*$/, ""); n = split($0, f, ";");
			d[f[n]] += (FILENAME ~ /diff_b/ ? c : -c) }
		END { for (k in d) if (d[k] != 0 && k !~ / /) print k, d[k] }' \
		"$FS_TOP/tests/fixtures/render/diff_a.folded" "$FS_TOP/tests/fixtures/render/diff_b.folded")
}

# ---- run ---------------------------------------------------------------------

@test "run --pprof --speedscope: the three outputs agree, stack by stack" {
	needs_jvm
	needs_go
	cat "$FS_TMP/main.summary"
	grep -q "^pprof      main.pb.gz" "$FS_TMP/main.summary"
	grep -q "^speedscope main.speedscope.json" "$FS_TMP/main.summary"
	folded_sorted "$FS_TMP/main.folded" >"$OUT/want"
	[ -s "$OUT/want" ]
	pprof -raw "$FS_TMP/main.pb.gz" | python3 "$PF" raw >"$OUT/pprof"
	diff -u "$OUT/want" "$OUT/pprof"
	speedscope_folded "$FS_TMP/main.speedscope.json" >"$OUT/speedscope"
	diff -u "$OUT/want" "$OUT/speedscope"
	local total
	total=$(awk '{ n += $NF } END { print n }' "$FS_TMP/main.folded")
	pprof -top -sample_index=samples "$FS_TMP/main.pb.gz" | grep -q "of $total total"
	[ "$(jq '[.profiles[].weights[]] | add' "$FS_TMP/main.speedscope.json")" = "$total" ]
}

@test "run --pprof with the raw table folded early many times: the outputs still agree" {
	needs_jvm
	needs_go
	cd "$OUT"
	fs_needs_test_sidecar
	FS_TEST_PROFILE_RAW_WORDS=300 "$FS_TEST_SIDECAR" run "$MAIN" -d 2s -F 499 -o early.svg \
		--pprof early.pb.gz --speedscope early.json >summary
	cat summary
	grep -q "folded early" summary
	folded_sorted early.folded >want
	pprof -raw early.pb.gz | python3 "$PF" raw >got
	diff -u want got
	speedscope_folded early.json >got2
	diff -u want got2
}

@test "run --pprof: go tool pprof -top names hotMethod first with the folded file's share" {
	needs_jvm
	needs_go
	run pprof -top -sample_index=samples "$FS_TMP/main.pb.gz"
	echo "$output"
	local first total self pct
	first=$(awk '/flat%/ { getline; print; exit }' <<<"$output")
	[[ "$first" == *flametest.Workload.hotMethod* ]]
	# its flat samples: stacks ending in hotMethod, whatever its kind suffix
	total=$(awk '{ n += $NF } END { print n }' "$FS_TMP/main.folded")
	self=$(awk '{ c = $NF; sub(/ [^ ]*$/, ""); n = split($0, f, ";");
		if (f[n] ~ /^flametest\.Workload\.hotMethod(_\[.\])?$/) s += c } END { print s + 0 }' \
		"$FS_TMP/main.folded")
	pct=$(awk -v s="$self" -v t="$total" 'BEGIN { printf "%.2f%%", 100 * s / t }')
	echo "want $self $pct"
	[ "$(awk '{ print $1, $2 }' <<<"$first")" = "$self $pct" ]
	[ "$self" -gt $((total / 3)) ]
	# cpu time: samples x 1/199 s
	grep -q "cpu nanoseconds" <(pprof -raw "$FS_TMP/main.pb.gz" | head -3)
	[ "$(pprof -raw "$FS_TMP/main.pb.gz" | sed -n 's/^Period: //p')" = $((1000000000 / 199)) ]
}

@test "run --pprof: labels (container id and names, pid, process) listed by -tags; the time window is set" {
	needs_jvm
	needs_go
	run pprof -tags "$FS_TMP/main.pb.gz"
	echo "$output"
	[[ "$output" == *"container_id:"* && "$output" == *"$MAIN"* ]]
	local k v
	for kv in container_name=app pod=checkout-7d9f namespace=shop engine=kubernetes; do
		k=${kv%%=*} v=${kv#*=}
		grep -q "^ *$k: Total" <<<"$output" || { echo "no label $k"; false; }
		grep -Eq "\): $v$" <<<"$output" || { echo "no value $v"; false; }
	done
	[[ "$output" == *"process:"* && "$output" == *"java"* ]]
	local pid
	pid=$(jq -r .pid "$FS_RUN/containers/$MAIN.json")
	[[ "$output" == *"pid:"* ]]
	pprof -raw "$FS_TMP/main.pb.gz" | grep -Eq "pid:\[$pid\]"
	# time_nanos / duration_nanos: pprof prints them in the header of -top
	TZ=UTC run pprof -top "$FS_TMP/main.pb.gz"
	[[ "$output" == *"Duration: 4"* ]]
	[[ "$output" == *"Time: $(date -u +'%b %-d, %Y')"* ]]
}

@test "run --pprof: thread names (hot-0, hot-1) and tids listed by -tags, counts summing to the total; -tagfocus thread= works" {
	needs_jvm
	needs_go
	run pprof -tags -sample_index=samples "$FS_TMP/main.pb.gz"
	echo "$output"
	local total sum
	total=$(awk '{ n += $NF } END { print n }' "$FS_TMP/main.folded")
	# the Workload's worker threads, as jstack names them (comm: 15 bytes)
	sed -n '/^ thread: /,/^$/p' <<<"$output" >"$OUT/threads"
	grep -Eq '\): hot-0$' "$OUT/threads"
	grep -Eq '\): hot-1$' "$OUT/threads"
	# every sample has a thread: the values add up to the folded file's total
	sum=$(awk '/%\):/ { n += $1 } END { printf "%d", n }' "$OUT/threads")
	echo "threads sum $sum, folded total $total"
	[ "$sum" = "$total" ]
	grep -q "^ thread: Total $total" "$OUT/threads"
	# tid: numeric, one per thread (host tids of the container's JVM)
	sed -n '/^ tid: /,/^$/p' <<<"$output" >"$OUT/tids"
	[ "$(grep -c '%):' "$OUT/tids")" -ge 2 ]
	local pid tid
	pid=$(jq -r .pid "$FS_RUN/containers/$MAIN.json")
	for tid in $(awk '/%\):/ { print $NF }' "$OUT/tids"); do
		[ "$tid" -gt "$pid" ] || { echo "tid $tid not above the pid $pid"; false; }
	done
	# -tagfocus: only hot-0's samples, and they are what -tags counted
	local want
	want=$(awk '$NF == "hot-0" { printf "%d", $1 }' "$OUT/threads")
	run pprof -traces -sample_index=samples -tagfocus thread=hot-0 "$FS_TMP/main.pb.gz"
	[ "$(grep -E '^ +thread: ' <<<"$output" | sort -u | awk '{ print $2 }')" = "hot-0" ]
	[[ "$output" == *flametest.Workload.hotMethod* ]]
	run pprof -top -sample_index=samples -tagfocus thread=hot-0 "$FS_TMP/main.pb.gz"
	echo "$output"
	grep -q "Active filters:" <<<"$output"
	pprof -traces -sample_index=samples -tagfocus thread=hot-0 "$FS_TMP/main.pb.gz" |
		awk '/^-+\+/ { getline; while ($0 ~ /:  /) getline; n += $1 } END { printf "%d\n", n }' \
			>"$OUT/focus"
	echo "hot-0: -tags $want, -tagfocus traces $(cat "$OUT/focus")"
	[ "$(cat "$OUT/focus")" = "$want" ]
}

@test "run --pprof: each (thread, tid) label pair is the JVM's own thread, by jcmd Thread.print (name and nid)" {
	needs_jvm
	needs_go
	fs_require_cmd nsenter setpriv
	local pid jcmd
	pid=$(jq -r .pid "$FS_RUN/containers/$MAIN.json")
	jcmd=$(dirname "$JAVA17")/jcmd
	[ -x "$jcmd" ] || skip "no jcmd beside $JAVA17"
	# the JVM's own list, from inside the container as its user (the attach
	# socket is in the container's /tmp): "name" ... nid=0x<tid in the container>
	nsenter -t "$pid" -m -p -- setpriv --reuid=1000 --regid=1000 --clear-groups \
		env -i PATH=/usr/bin:/bin HOME=/tmp "$jcmd" -J-XX:-UsePerfData 1 Thread.print \
		>"$OUT/jstack" 2>&1 || { cat "$OUT/jstack"; false; }
	sed -nE 's/^"([^"]*)".* nid=0x([0-9a-f]+) .*/\2 \1/p' "$OUT/jstack" >"$OUT/nids"
	[ -s "$OUT/nids" ] || { cat "$OUT/jstack"; false; }
	# (thread, tid) pairs of the profile's samples
	pprof -traces "$FS_TMP/main.pb.gz" |
		awk '/^ +thread:  / { t = substr($0, index($0, ":  ") + 3) }
			/^ +tid:  / { print $2 "\t" t }' | sort -u >"$OUT/pairs"
	cat "$OUT/pairs"
	local tid name nspid nid java matched=0
	while IFS=$'\t' read -r tid name; do
		# host tid -> the container's tid (NSpid: host first, the container's last)
		nspid=$(awk '/^NSpid:/ { print $NF }' "/proc/$pid/task/$tid/status" 2>/dev/null) ||
			continue # the thread exited since
		[ -n "$nspid" ] || continue
		nid=$(printf '%x' "$nspid")
		java=$(awk -v n="$nid" '$1 == n { sub(/^[^ ]* /, ""); print; exit }' "$OUT/nids")
		[ -n "$java" ] || continue # not a JVM thread jcmd lists
		echo "tid $tid (nid 0x$nid): label '$name', JVM '$java'"
		if [ "$name" = java ] && [ "$java" = main ]; then
			continue # the launcher's main thread keeps the process's comm
		fi
		# the label is the JVM's name cut to the kernel's 15 bytes
		[ "$name" = "${java:0:15}" ] || { echo "mismatch for tid $tid"; false; }
		matched=$((matched + 1))
	done <"$OUT/pairs"
	grep -q $'\thot-0$' "$OUT/pairs"
	grep -q $'\thot-1$' "$OUT/pairs"
	[ "$matched" -ge 2 ]
}

@test "run --pprof: named native frames keep their module (libjvm.so, libc.so.6) with build id in -raw and -traces -files" {
	needs_jvm
	needs_go
	pprof -raw "$FS_TMP/main.pb.gz" >"$OUT/raw"
	sed -n '/^Mappings/,$p' "$OUT/raw"
	local libjvm id
	libjvm=$(readlink -f "$JAVA17")
	libjvm=$(dirname "$(dirname "$libjvm")")/lib/server/libjvm.so
	# the mapping: the path as the container sees it (host /usr is bound
	# at /usr), and the file's GNU build id
	id=$(awk -v f="$libjvm" '/^Mappings/ { m = 1 } m && $3 == f { print $1 }' "$OUT/raw")
	id=${id%:}
	[ -n "$id" ] || { echo "no mapping for $libjvm"; false; }
	if command -v readelf >/dev/null; then
		local bid
		bid=$(readelf -n "$libjvm" | awk '/Build ID/ { print $3 }')
		grep -Eq "^$id: .* $libjvm $bid " "$OUT/raw"
	fi
	# a symbolized libjvm frame (its function name, no [libjvm.so]) points at it
	grep -Eq "^ +[0-9]+: 0x0 M=$id JavaCalls::call_helper" "$OUT/raw"
	grep -Eq '^[0-9]+: 0x0/0x0/0x0 /.*/libc\.so\.6 [0-9a-f]+ ' "$OUT/raw"
	# the kernel's mapping whenever a kernel frame was sampled
	if grep -q '_\[k\]' "$FS_TMP/main.folded"; then
		grep -Eq '^[0-9]+: 0x0/0x0/0x0 \[kernel\.kallsyms\] ' "$OUT/raw" ||
			{ echo "kernel frames but no kernel mapping"; false; }
	fi
	# -traces by file: the modules of the frames, as pprof names them
	run pprof -traces -files "$FS_TMP/main.pb.gz"
	[[ "$output" == *"[libjvm.so]"* ]]
	[[ "$output" == *"[libc.so.6]"* ]]
	# and the folded file has the frame without its module, as before
	grep -q ';JavaCalls::call_helper' "$FS_TMP/main.folded"
	if grep -q 'libjvm.so' "$FS_TMP/main.folded"; then false; fi
}

@test "convert: folded input has no threads, so no thread or tid label" {
	needs_go
	"$FS_SIDECAR" convert --process-root --pprof "$OUT/c.pb.gz" "$FIX/kinds.folded"
	run pprof -tags "$OUT/c.pb.gz"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"process:"* ]]
	[[ "$output" != *"thread:"* && "$output" != *" tid:"* ]]
}

@test "run --pprof: -diff_base between two runs of the same container works (one --with-pid)" {
	needs_jvm
	needs_go
	cd "$OUT"
	"$FS_SIDECAR" run "$MAIN" -d 1s -q -o b.svg --no-folded --pprof b.pb.gz --with-pid
	run pprof -top -sample_index=samples -diff_base "$FS_TMP/main.pb.gz" b.pb.gz
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"flametest.Workload.hotMethod"* ]]
	# --with-pid: root frames java-PID, the process label still java
	run pprof -tags b.pb.gz
	echo "$output"
	grep -Eq '\): java$' <<<"$output"
	if grep -q '): java-' <<<"$output"; then false; fi
}

@test "run --speedscope: speedscope loads it in headless Chromium and shows hotMethod first" {
	needs_jvm
	command -v chromium >/dev/null || skip "chromium is not installed"
	[ -f "$SPEEDSCOPE_DIR/index.html" ] || skip "speedscope npm package not installed (tests/install-deps.sh)"
	local web="$OUT/web" port dom
	cp -r "$SPEEDSCOPE_DIR" "$web"
	cp "$FS_TMP/main.speedscope.json" "$web/profile.json"
	python3 -u -m http.server --bind 127.0.0.1 0 --directory "$web" >"$OUT/http.log" 2>&1 &
	local srv=$!
	fs_wait_for 10 grep -q "port" "$OUT/http.log"
	port=$(sed -n 's/.* port \([0-9]*\) .*/\1/p' "$OUT/http.log" | head -1)
	local url="http://127.0.0.1:$port/index.html#profileURL=http://127.0.0.1:$port/profile.json&view=sandwich"
	CHROMIUM_EXTRA_FLAGS=--virtual-time-budget=15000 "$FS_TOP/tests/browser/chromium.sh" dump "$url" \
		>"$OUT/dom.html" || true
	mkdir -p "$FS_BUILD/test-artifacts"
	CHROMIUM_EXTRA_FLAGS=--virtual-time-budget=15000 "$FS_TOP/tests/browser/chromium.sh" shot \
		"$FS_BUILD/test-artifacts/export-speedscope.png" 1400x900 "$url" || true
	kill "$srv"
	wait "$srv" 2>/dev/null || true
	# the sandwich view's table, by self time: hotMethod on its first row
	dom=$(sed 's/></>\n</g' "$OUT/dom.html")
	grep -q "main.speedscope.json\|CPU of container" <<<"$dom"
	if grep -qi "something went wrong\|failed to load\|error loading" <<<"$dom"; then false; fi
	first=$(grep -m1 -E '^</span>[^<]+</td>' <<<"$dom")
	echo "first row: $first"
	[[ "$first" == *flametest.Workload.hotMethod* ]]
	[ -s "$FS_BUILD/test-artifacts/export-speedscope.png" ]
}

@test "run: --pprof and -o - both to standard output is a usage error" {
	run "$FS_SIDECAR" run x -o - --pprof -
	[ "$status" -eq 2 ]
	[[ "$output" == *"only one output"* ]]
}
