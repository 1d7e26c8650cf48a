#!/usr/bin/env bats
# JIT frames of runtimes other than HotSpot named from the perf map they
# write in their container (sidecar/profile/profile_rtmaps.c,
# docs/runtimes.md): Debian's node with --perf-basic-prof beside a JVM in the
# same runc container, and hostile maps (foreign owner, symlink, FIFO, huge,
# control bytes, overlong lines, a map growing past the cap in the window).
# Oracle: perf record + perf script on the same node process, resolving its
# addresses with node's own map.

load ../lib/containers

# A hot JS function, called forever.
write_fib() {
	mkdir -p "$1"
	cat >"$1/fib.js" <<'EOF'
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
let s = 0;
for (;;) s += fib(27);
EOF
	chmod -R a+rX "$1"
}

needs_node() {
	fs_require_root
	fs_require_cmd runc jq node
}

# ns_pid HOST_PID: its pid in its innermost pid namespace.
ns_pid() {
	awk '/^NSpid:/ {print $NF}' "/proc/$1/status"
}

# child_pid PARENT COMM: the first child of PARENT named COMM.
child_pid() {
	local c
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		if [ "$(cat "/proc/$c/comm" 2>/dev/null)" = "$2" ]; then
			echo "$c"
			return 0
		fi
	done
	return 1
}

# The share (%) of the samples of root frame ROOT in folded file F whose
# stack holds a frame matching ERE, and their total: "PCT TOTAL".
share() {
	awk -v root="$2" -v re="$3" '{
		n = $NF
		if (index($0, root ";") != 1) next
		t += n
		line = $0
		sub(/ [0-9]+$/, "", line)
		if (line ~ re) m += n
	} END { printf "%d %d\n", (t ? 100 * m / t : 0), t }' "$1"
}

setup_file() { fs_file_setup; }
teardown_file() { fs_file_teardown; }

setup() { fs_ctrs_setup; }

teardown() {
	[ -n "${WRITER:-}" ] && kill "$WRITER" 2>/dev/null && wait "$WRITER" 2>/dev/null
	fs_ctrs_teardown
}

@test "perfmap-runtimes: node's JS frames named from its map beside a JVM; perf agrees" {
	needs_node
	[ -f "$FS_BUILD/java/flametest/Workload.class" ] || skip "Java workloads not built (make agent)"
	local name="rtmap-$$-node" app="$FS_TMP/app-node"
	write_fib "$app"
	CTRS+=("$name")
	fs_start_jvm "$name" --mount "$app:/app" \
		--wrap 'node --perf-basic-prof /app/fib.js </dev/null >/dev/null 2>&1 & exec "$@"' -- --threads 1
	local node nspid map
	fs_wait_for 10 child_pid "$PID" node
	node=$(child_pid "$PID" node)
	nspid=$(ns_pid "$node")
	map="/proc/$node/root/tmp/perf-$nspid.map"
	# optimized by TurboFan: "JS:*fib"
	fs_wait_for 30 grep -q 'JS:\*fib ' "$map"

	# The oracle first: perf's own resolution of node's samples with node's
	# map, copied as /tmp/perf-<host pid>.map into a private /tmp.
	perf record -q -e cpu-clock -F 499 -g -p "$node" -o "$OUT/perf.data" -- sleep 3 \
		>/dev/null 2>&1 || skip "perf record failed here"
	# (the test's directory is under /tmp too: perf.data is read by fd)
	unshare -m --propagation private sh -c '
		exec 3<"$3" && mount -t tmpfs tmpfs /tmp && cp "$1" "/tmp/perf-$2.map" &&
		perf script -i /proc/self/fd/3 -F comm,ip,sym 2>/dev/null' sh "$map" "$node" \
		"$OUT/perf.data" >"$OUT/perf.txt"
	# a sample: a header line, then frames leaf first, then a blank line
	local perf_pct
	perf_pct=$(awk '
		/^[^ \t]/ { if (n) { t++; if (hit) m++ } n = 1; hit = 0; next }
		/^$/ { next }
		/JS:[*^~]?fib / { hit = 1 }
		END { if (n) { t++; if (hit) m++ } printf "%d %d\n", (t ? 100 * m / t : 0), t }' "$OUT/perf.txt")
	echo "# perf: ${perf_pct% *}% of ${perf_pct#* } node samples in JS fib" >&3
	# and where the leaf is: the first frame of each sample
	local perf_leaf
	perf_leaf=$(awk '
		/^[^ \t]/ { t++; first = 1; next }
		/^$/ { next }
		first { if ($0 ~ /JS:[*^~]?fib /) m++; first = 0 }
		END { printf "%d\n", (t ? 100 * m / t : 0) }' "$OUT/perf.txt")

	cd "$OUT"
	run "$FS_SIDECAR" run "$name" -d 3s -F 499 -o g.svg
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"perf map   pid $node (node, pid $nspid in the container): "* ]]
	[[ "$output" == *"jvm        pid $PID "* ]]
	local pct total
	read -r pct total < <(share g.folded node ';JS:[*^~]?fib [^;]*_\[j\]')
	echo "# flamesidecar: $pct% of $total node samples in JS fib" >&3
	[ "$total" -gt 50 ]
	[ "$pct" -ge 95 ]
	# as perf names them, within 4 points
	[ "${perf_pct#* }" -gt 50 ]
	[ $((pct - ${perf_pct% *})) -le 4 ] && [ $((${perf_pct% *} - pct)) -le 4 ]
	# the leaf in fib as often as perf finds it there, within 10 points
	local leaf
	read -r leaf total < <(share g.folded node ';JS:[*^~]?fib [^;]*_\[j\]$')
	echo "# leaf in JS fib: flamesidecar $leaf%, perf $perf_leaf%" >&3
	[ $((leaf - perf_leaf)) -le 10 ] && [ $((perf_leaf - leaf)) -le 10 ]
	# The JVM keeps its own path: its Java frames named from its JIT log,
	# nothing of node's map in it, no "_[j]" on its frames.
	read -r pct total < <(share g.folded java ';flametest\.Workload\.hotMethod')
	echo "# the JVM: $pct% of $total samples in hotMethod" >&3
	[ "$total" -gt 50 ]
	[ "$pct" -ge 80 ]
	! grep -E '^java;' g.folded | grep -q -e 'JS:' -e '_\[j\]' || false
	# the SVG colours them as JIT frames and holds no control byte
	grep -q 'JS:\*fib' g.svg
	! LC_ALL=C grep -q -P '[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]' g.svg g.folded || false
}

# A busy-ish shell loop: sampled, but leaving CPU to the rest.
LOOP='while :; do i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; sleep 0.05; done'

@test "perfmap-runtimes: hostile maps are refused or bounded, with a warning each" {
	needs_node
	[ -x /usr/bin/time ] || skip "GNU time is not installed"
	local name="rtmap-$$-hostile" app="$FS_TMP/app-hostile" dir="$FS_TMP/rtmap-hostile"
	write_fib "$app"
	CTRS+=("$name")
	fs_make_bundle "$dir" --annotate flamesidecar.io/enable=true --mount "$app:/app" -- /bin/sh -c "
		for k in 1 2 3 4 5 6; do ( $LOOP ) & done
		exec node --perf-basic-prof /app/fib.js"
	fs_runc_run "$name" "$dir"
	fs_wait_for 10 test -f "$FS_RUN/containers/$name.json"
	PID=$(fs_container_pid "$name")
	local tmp="/proc/$PID/root/tmp" loops=() c
	fs_wait_for 30 grep -q 'JS:\*fib ' "$tmp/perf-$(ns_pid "$PID").map"
	for c in $(cat /proc/"$PID"/task/*/children); do
		[ "$(cat "/proc/$c/comm")" = sh ] && loops+=("$c")
	done
	[ "${#loops[@]}" -eq 6 ]
	local n=() h
	for h in "${loops[@]}"; do n+=("$(ns_pid "$h")"); done
	# 0: owned by another uid; 1: a symlink to a host-looking path; 2: a
	# FIFO; 3: huge (sparse); 4: a hard link; 5: grows past the cap
	echo "7f0000000000 1000 foreign" >"$tmp/perf-${n[0]}.map"
	ln -s /etc/hostname "$tmp/perf-${n[1]}.map"
	mkfifo "$tmp/perf-${n[2]}.map"
	truncate -s 100G "$tmp/perf-${n[3]}.map"
	echo "7f0000000000 1000 linked" >"$tmp/linked"
	ln "$tmp/linked" "$tmp/perf-${n[4]}.map"
	echo "7f0000000000 1000 grown" >"$tmp/perf-${n[5]}.map"
	chown 1000:1000 "$tmp/perf-${n[2]}.map" "$tmp/perf-${n[3]}.map" "$tmp/linked" \
		"$tmp/perf-${n[5]}.map"
	# node's map gets control bytes over its fib code (the newest line
	# wins), an overlong line and a line with a NUL
	local nodemap="$tmp/perf-$(ns_pid "$PID").map" fib
	fib=$(awk '/JS:\*fib / {a = $1; s = $2} END {print a, s}' "$nodemap")
	{
		printf '%s %s evil\033]0;pwned\007\001\177name;x\n' $fib
		printf '7f0000002000 10 %s\n' "$(head -c 10000 /dev/zero | tr '\0' A)"
		printf '7f0000003000 10 nul\000byte\n'
	} >>"$nodemap"
	# 80 MiB of lines over ~2 s into map 5 while the window runs
	yes "7f0000001000 40 grown_$(head -c 100 /dev/zero | tr '\0' g)" | head -c 4M >"$OUT/chunk"
	(for k in $(seq 20); do cat "$OUT/chunk" >>"$tmp/perf-${n[5]}.map"; sleep 0.1; done) &
	WRITER=$!

	cd "$OUT"
	run /usr/bin/time -f 'maxrss %M' timeout 60 "$FS_SIDECAR" run "$name" -d 3s -F 499 -o h.svg
	echo "$output"
	wait "$WRITER"
	WRITER=
	[ "$status" -eq 0 ]
	[[ "$output" == *"pid ${loops[0]} (sh): its perf map is not read: refusing /tmp/perf-${n[0]}.map: owned by uid 0, not by uid 1000"* ]]
	[[ "$output" == *"pid ${loops[1]} (sh): its perf map is not read: refusing /tmp/perf-${n[1]}.map: it is a symbolic link"* ]]
	[[ "$output" == *"pid ${loops[2]} (sh): its perf map is not read: refusing /tmp/perf-${n[2]}.map: it is a FIFO"* ]]
	[[ "$output" == *"pid ${loops[3]} (sh): /tmp/perf-${n[3]}.map is over 64 MiB: only its first 64 MiB are read"* ]]
	[[ "$output" == *"pid ${loops[4]} (sh): its perf map is not read: refusing /tmp/perf-${n[4]}.map: it has 2 hard links"* ]]
	[[ "$output" == *"pid ${loops[5]} (sh): /tmp/perf-${n[5]}.map is over 64 MiB"* ]]
	[ "$(stat -c %s "$tmp/perf-${n[5]}.map")" -gt $((64 << 20)) ]
	# node: still named, the control bytes made visible, the bad lines skipped
	[[ "$output" =~ "perf map   pid $PID (node, pid 1 in the container): "[0-9]+" JIT symbols from /tmp/perf-1.map ("[0-9]+" KiB), named "[0-9.]+"% of its "[0-9]+" JIT frames, "[1-9][0-9]*" lines skipped" ]]
	grep -q '^node;.*;evil?]0:pwned???name:x_\[j\]' h.folded
	! LC_ALL=C grep -q -P '[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]' h.svg h.folded || false
	! grep -q -e foreign -e linked -e AAAAAAAA h.folded || false
	# memory: a 64 MiB map read in 16 MiB chunks
	local rss
	rss=$(awk '/^maxrss/ {print $2}' <<<"$output")
	echo "# max RSS of run: $((rss / 1024)) MiB" >&3
	# (the sanitizer build's shadow memory: 330 MiB for the same run)
	[ -n "${FS_SANITIZE:-}" ] || [ "$rss" -lt $((200 * 1024)) ]
}

@test "perfmap-runtimes: a /tmp on a file system the container could stall is not read" {
	fs_require_root
	fs_require_cmd runc jq
	local name="rtmap-$$-fs" dir="$FS_TMP/rtmap-fs" mnt="$FS_TMP/hugetlb"
	# hugetlbfs stands for FUSE or NFS: not on the list of local file
	# systems, and mountable here without any tool
	mkdir -p "$mnt"
	mount -t hugetlbfs -o mode=1777 none "$mnt" || skip "cannot mount a hugetlbfs here"
	CTRS+=("$name")
	fs_make_bundle "$dir" --annotate flamesidecar.io/enable=true -- /bin/sh -c "$LOOP"
	fs_bundle_set "$dir" '.mounts = [.mounts[] | select(.destination != "/tmp")] +
		[{destination: "/tmp", type: "bind", source: $s, options: ["rbind"]}]' --arg s "$mnt"
	fs_runc_run "$name" "$dir"
	fs_wait_for 10 test -f "$FS_RUN/containers/$name.json"
	PID=$(fs_container_pid "$name")
	touch "$mnt/perf-1.map" # (hugetlbfs files hold no written text)
	chown 1000:1000 "$mnt/perf-1.map"
	cd "$OUT"
	run timeout 60 "$FS_SIDECAR" run "$name" -d 2s -F 499 -o m.svg
	echo "$output"
	fs_stop_containers runc "$name"
	umount "$mnt"
	CTRS=()
	[ "$status" -eq 0 ]
	[[ "$output" == *"pid $PID (sh): its perf map is not read: refusing its /tmp: on a file system of type hugetlbfs (FUSE, network or unknown)"* ]]
	[[ "$output" != *"perf map   pid $PID"* ]]
}
