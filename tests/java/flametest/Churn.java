/*
 * Churn - a JVM whose compiled code keeps changing: the workload of the
 * "whole window" JIT map test (tests/integration/jit-window.bats).
 *
 *   java -XX:+PreserveFramePointer -XX:ReservedCodeCacheSize=8m \
 *        -cp build/java flametest.Churn [--rounds-per-gc N]
 *
 * Every round defines ChurnTask afresh in a new class loader (the same bytes,
 * a new class), runs its methods until the JIT compiles them, and drops the
 * loader; every few rounds a System.gc() unloads the old classes, so their
 * compiled code is flushed and the code cache reuses the addresses for the
 * next round's code. Each round also switches ChurnTask's argument type half
 * way, which deoptimises the code compiled for the first type and compiles
 * it again. Prints "READY" once the first round is done, "ROUND n" after
 * each round (flushed).
 */
package flametest;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;

public final class Churn {
    static volatile long sink;

    /* A loader that defines one class from bytes and delegates the rest. */
    static final class OneClassLoader extends ClassLoader {
        private final byte[] bytes;

        OneClassLoader(byte[] bytes) {
            super(Churn.class.getClassLoader());
            this.bytes = bytes;
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (name.equals("flametest.ChurnTask")) {
                synchronized (getClassLoadingLock(name)) {
                    Class<?> c = findLoadedClass(name);
                    if (c == null)
                        c = defineClass(name, bytes, 0, bytes.length);
                    return c;
                }
            }
            return super.loadClass(name, resolve);
        }
    }

    static byte[] taskBytes() throws IOException {
        try (InputStream in = Churn.class.getResourceAsStream("/flametest/ChurnTask.class")) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            byte[] buf = new byte[8192];
            for (int n; (n = in.read(buf)) > 0;)
                out.write(buf, 0, n);
            return out.toByteArray();
        }
    }

    static void round(byte[] bytes, long ms) throws Exception {
        Class<?> c = new OneClassLoader(bytes).loadClass("flametest.ChurnTask");
        Method work = c.getMethod("work", Object.class, int.class);
        long end = System.nanoTime() + ms * 1_000_000L;
        long half = System.nanoTime() + ms * 500_000L;
        Object arg = Integer.valueOf(7);
        long acc = 0;
        while (System.nanoTime() < end) {
            if (arg instanceof Integer && System.nanoTime() > half)
                arg = "seven"; /* a new type: the compiled code deoptimises */
            acc += (Long) work.invoke(null, arg, 2_000);
        }
        sink = acc;
    }

    public static void main(String[] args) throws Exception {
        int perGc = 3;
        long ms = 150;
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (args[i].equals("--rounds-per-gc"))
                perGc = Integer.parseInt(args[i + 1]);
            else if (args[i].equals("--round-ms"))
                ms = Long.parseLong(args[i + 1]);
        }
        byte[] bytes = taskBytes();
        round(bytes, ms);
        System.out.println("READY");
        System.out.flush();
        for (int n = 1;; n++) {
            round(bytes, ms);
            if (n % perGc == 0)
                System.gc();
            System.out.println("ROUND " + n);
            System.out.flush();
        }
    }
}
