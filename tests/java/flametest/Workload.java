/*
 * Workload - the CPU-bound JVM every flamesidecar integration test profiles.
 *
 *   java -XX:+PreserveFramePointer -cp build/java flametest.Workload [options]
 *
 *   --threads N            N worker threads running hotMethod (default 1)
 *   --late-thread S        after S seconds start a thread running lateMethod
 *   --syscalls             a thread doing small writes to /dev/null (syscallMethod)
 *   --late-compile S       after S seconds start calling lateCompiledMethod, never
 *                          called before, so it is JIT-compiled late
 *   --exit-after S         exit (status 0) after S seconds
 *   --ops-file PATH        every 500 ms replace PATH with "OPS ELAPSED_MS\n":
 *                          hotMethod calls so far and ms since the start
 *   --spawn-child          start a second JVM of this class (same JVM options,
 *                          without agents) as a child process
 *   --warmup S             seconds of looping before READY (default 1.5)
 *
 * Stdout lines (each flushed): "READY" once hotMethod has run long enough to be
 * JIT-compiled; "LATE-THREAD", "LATE-COMPILE" when those start; "CHILD <pid>"
 * when a child JVM was started; a child prints "CHILD-READY <pid>" instead
 * of READY. Fractional seconds are accepted everywhere.
 */
package flametest;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

public final class Workload {
    static final AtomicLong OPS = new AtomicLong();
    static volatile long sink;

    /* The hot method: ~0.5 ms of integer mixing per call. */
    static long hotMethod(long seed) {
        long x = seed | 1;
        for (int i = 0; i < 200_000; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            x += i;
        }
        return x;
    }

    static long lateMethod(long seed) {
        long x = seed + 0x9E3779B97F4A7C15L;
        for (int i = 0; i < 200_000; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            x ^= x >>> 29;
        }
        return x;
    }

    static long lateCompiledMethod(long seed) {
        long x = seed ^ 0xC2B2AE3D27D4EB4FL;
        for (int i = 0; i < 200_000; i++) {
            x += (x << 3) ^ (x >>> 11) ^ i;
        }
        return x;
    }

    static void syscallMethod(OutputStream out) throws IOException {
        for (int i = 0; i < 1000; i++)
            out.write(i);
    }

    static void say(String line) {
        synchronized (System.out) {
            System.out.println(line);
            System.out.flush();
        }
    }

    static Thread start(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    static void sleepSeconds(double s) {
        try {
            Thread.sleep((long) (s * 1000));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static void hotLoop() {
        long seed = Thread.currentThread().getId();
        for (;;) {
            sink += hotMethod(seed++);
            OPS.incrementAndGet();
        }
    }

    static void lateLoop() {
        long seed = 7;
        for (;;)
            sink += lateMethod(seed++);
    }

    static void lateCompiledLoop() {
        long seed = 11;
        for (;;)
            sink += lateCompiledMethod(seed++);
    }

    static void syscallLoop() {
        try (OutputStream out = new FileOutputStream("/dev/null")) {
            for (;;)
                syscallMethod(out);
        } catch (IOException e) {
            say("SYSCALLS-FAILED " + e);
        }
    }

    static void writeOps(Path file, long startNanos) {
        String text = OPS.get() + " " + (System.nanoTime() - startNanos) / 1_000_000 + "\n";
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try {
            Files.write(tmp, text.getBytes(StandardCharsets.US_ASCII));
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING,
                       StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            say("OPS-FILE-FAILED " + e);
        }
    }

    static Process spawnChild(String[] args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(System.getProperty("java.home") + File.separator + "bin" + File.separator + "java");
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments())
            if (!a.startsWith("-agentpath") && !a.startsWith("-agentlib") && !a.startsWith("-javaagent"))
                cmd.add(a);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(Workload.class.getName());
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--spawn-child"))
                continue;
            if (args[i].equals("--ops-file")) {
                i++;
                continue;
            }
            cmd.add(args[i]);
        }
        cmd.add("--child-of");
        cmd.add(Long.toString(ProcessHandle.current().pid()));
        return new ProcessBuilder(cmd).inheritIO().start();
    }

    static void usage(String why) {
        System.err.println("Workload: " + why);
        System.err.println("usage: flametest.Workload [--threads N] [--late-thread S] [--syscalls]"
                + " [--late-compile S] [--exit-after S] [--ops-file PATH] [--spawn-child]"
                + " [--warmup S]");
        System.exit(2);
    }

    public static void main(String[] args) throws Exception {
        int threads = 1;
        double lateThread = -1, lateCompile = -1, exitAfter = -1, warmup = 1.5;
        boolean syscalls = false, spawn = false;
        long childOf = -1;
        Path opsFile = null;
        try {
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                case "--threads": threads = Integer.parseInt(args[++i]); break;
                case "--late-thread": lateThread = Double.parseDouble(args[++i]); break;
                case "--syscalls": syscalls = true; break;
                case "--late-compile": lateCompile = Double.parseDouble(args[++i]); break;
                case "--exit-after": exitAfter = Double.parseDouble(args[++i]); break;
                case "--ops-file": opsFile = Path.of(args[++i]); break;
                case "--spawn-child": spawn = true; break;
                case "--warmup": warmup = Double.parseDouble(args[++i]); break;
                case "--child-of": childOf = Long.parseLong(args[++i]); break;
                default: usage("unknown option " + args[i]);
                }
            }
        } catch (ArrayIndexOutOfBoundsException | NumberFormatException e) {
            usage("bad or missing option value: " + e.getMessage());
        }
        if (threads < 1)
            usage("--threads must be at least 1");

        final long startNanos = System.nanoTime();
        for (int i = 0; i < threads; i++)
            start("hot-" + i, Workload::hotLoop);
        if (syscalls)
            start("syscalls", Workload::syscallLoop);
        if (spawn) {
            Process child = spawnChild(args);
            Runtime.getRuntime().addShutdownHook(new Thread(child::destroy));
            say("CHILD " + child.pid());
        }

        /* READY: warmed up for `warmup` seconds and hotMethod called often
         * enough for the tiered compilers to have compiled it. */
        while (System.nanoTime() - startNanos < (long) (warmup * 1e9) || OPS.get() < 1000)
            sleepSeconds(0.05);
        say(childOf > 0 ? "CHILD-READY " + ProcessHandle.current().pid() : "READY");

        long nextOps = 0;
        boolean lateThreadStarted = false, lateCompileStarted = false;
        for (;;) {
            double t = (System.nanoTime() - startNanos) / 1e9;
            if (exitAfter >= 0 && t >= exitAfter)
                System.exit(0);
            if (!lateThreadStarted && lateThread >= 0 && t >= lateThread) {
                lateThreadStarted = true;
                start("late-thread", Workload::lateLoop);
                say("LATE-THREAD");
            }
            if (!lateCompileStarted && lateCompile >= 0 && t >= lateCompile) {
                lateCompileStarted = true;
                start("late-compile", Workload::lateCompiledLoop);
                say("LATE-COMPILE");
            }
            if (opsFile != null && System.nanoTime() >= nextOps) {
                writeOps(opsFile, startNanos);
                nextOps = System.nanoTime() + 500_000_000L;
            }
            if (childOf > 0 && !ProcessHandle.of(childOf).map(ProcessHandle::isAlive).orElse(false))
                System.exit(0);
            sleepSeconds(0.05);
        }
    }
}
