/*
 * Handles - a JVM whose hot loop calls through method handles and lambdas, so
 * HotSpot compiles many method handle intrinsics (MethodHandle.invokeBasic,
 * linkToStatic, linkToSpecial, linkToVirtual, linkToInterface) of several
 * signatures. agent.bats compares our map's names for them with the JVM's own
 * `jcmd <pid> Compiler.perfmap`.
 *
 *   java -cp build/java flametest.Handles [--exit-after S]
 *
 * Prints "READY" (flushed) after a warm-up of 2 s, then loops until exit.
 */
package flametest;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.function.Function;
import java.util.function.LongUnaryOperator;

public final class Handles {
	static long sink;

	static long twice(long x) {
		return x * 2 + 1;
	}

	long flip(long x) {
		return x ^ 0x5555;
	}

	private long bump(long x) {
		return x + 3;
	}

	public static void main(String[] args) throws Throwable {
		double exitAfter = 120;
		for (int i = 0; i + 1 < args.length; i++)
			if (args[i].equals("--exit-after"))
				exitAfter = Double.parseDouble(args[i + 1]);
		MethodHandles.Lookup l = MethodHandles.lookup();
		MethodType lj = MethodType.methodType(long.class, long.class);
		MethodHandle st = l.findStatic(Handles.class, "twice", lj);
		MethodHandle vi = l.findVirtual(Handles.class, "flip", lj);
		MethodHandle sp = l.findSpecial(Handles.class, "bump", lj, Handles.class);
		MethodHandle in = l.findVirtual(LongUnaryOperator.class, "applyAsLong", lj);
		Handles self = new Handles();
		LongUnaryOperator lambda = x -> x * 5;
		Function<Long, Long> boxed = x -> x + 1;
		long start = System.nanoTime();
		long end = start + (long) (exitAfter * 1e9);
		boolean ready = false;
		while (System.nanoTime() < end) {
			for (int i = 0; i < 10000; i++) {
				sink += (long) st.invokeExact((long) i);
				sink += (long) vi.invokeExact(self, (long) i);
				sink += (long) sp.invokeExact(self, (long) i);
				sink += (long) in.invokeExact(lambda, (long) i);
				sink += boxed.apply((long) i);
				MethodHandle pick = (i & 1) == 0 ? st : vi;
				sink += (i & 1) == 0 ? (long) pick.invoke((long) i) : (long) pick.invoke(self, (long) i);
			}
			if (!ready && System.nanoTime() - start > 2_000_000_000L) {
				ready = true;
				System.out.println("READY");
				System.out.flush();
			}
		}
		System.out.println(sink);
	}
}
