/*
 * ChurnTask - the code Churn defines again in every round (see Churn.java).
 * work() dispatches on its argument's type, so a new type makes HotSpot
 * deoptimise the code it compiled for the old one.
 */
package flametest;

public final class ChurnTask {
    public static long work(Object o, int n) {
        long x = o.hashCode();
        for (int i = 0; i < n; i++)
            x = churnMix(x, i) + churnShape(o);
        return x;
    }

    static long churnMix(long x, int i) {
        x ^= x << 13;
        x ^= x >>> 7;
        x ^= x << 17;
        return x + i;
    }

    static int churnShape(Object o) {
        if (o instanceof Integer)
            return (Integer) o & 3;
        if (o instanceof String)
            return ((String) o).length();
        return 1;
    }
}
