package oracle;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A SQL workload for the JFR oracle tests: an embedded database engine
 * (H2 or Apache Derby, from their Debian packages) does the work, so the hot
 * Java code is the engine's, not ours.
 *
 * Usage: SqlLoad JDBC_URL SHAPE THREADS [SECONDS]
 * SHAPE: point (primary-key lookups), scan (aggregates over the table),
 * write (updates, inserts, deletes), mixed (all three). Prints READY once
 * the table is loaded; runs SECONDS (default: until killed).
 */
public final class SqlLoad {
	private static final int ROWS = 20000;

	private SqlLoad() {
	}

	public static void main(String[] args) throws Exception {
		String url = args[0];
		String shape = args.length > 1 ? args[1] : "mixed";
		int threads = args.length > 2 ? Integer.parseInt(args[2]) : 2;
		long secs = args.length > 3 ? Long.parseLong(args[3]) : Long.MAX_VALUE / 2000;
		try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
			s.execute("CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(64), grp INT, price DOUBLE)");
			s.execute("CREATE TABLE orders (id INT PRIMARY KEY, item INT, qty INT)");
			c.setAutoCommit(false);
			try (PreparedStatement p = c.prepareStatement("INSERT INTO items VALUES (?, ?, ?, ?)")) {
				for (int i = 0; i < ROWS; i++) {
					p.setInt(1, i);
					p.setString(2, "item-" + Integer.toHexString(i * 7919));
					p.setInt(3, i % 97);
					p.setDouble(4, (i * 31 % 1000) / 10.0);
					p.addBatch();
					if (i % 1000 == 999)
						p.executeBatch();
				}
			}
			c.commit();
		}
		long end = System.currentTimeMillis() + secs * 1000;
		Thread[] ts = new Thread[threads];
		for (int t = 0; t < threads; t++) {
			final int id = t;
			ts[t] = new Thread(() -> work(url, shape, id, end), "sql-" + t);
			ts[t].start();
		}
		System.out.println("READY");
		System.out.flush();
		for (Thread t : ts)
			t.join();
	}

	private static void work(String url, String shape, int id, long end) {
		try (Connection c = DriverManager.getConnection(url)) {
			PreparedStatement point = c.prepareStatement("SELECT name, price FROM items WHERE id = ?");
			PreparedStatement scan = c.prepareStatement(
					"SELECT grp, COUNT(*), SUM(price) FROM items WHERE price > ? GROUP BY grp ORDER BY grp");
			PreparedStatement upd = c.prepareStatement("UPDATE items SET price = price + 0.5 WHERE id = ?");
			PreparedStatement ins = c.prepareStatement("INSERT INTO orders VALUES (?, ?, ?)");
			PreparedStatement del = c.prepareStatement("DELETE FROM orders WHERE id < ?");
			int next = id * 100000000, first = next;
			long sink = 0;
			for (long n = 0; System.currentTimeMillis() < end; n++) {
				ThreadLocalRandom r = ThreadLocalRandom.current();
				String s = shape.equals("mixed") ? (n % 10 < 6 ? "point" : n % 10 < 8 ? "write" : "scan") : shape;
				if (s.equals("point")) {
					point.setInt(1, r.nextInt(ROWS));
					sink += drain(point.executeQuery());
				} else if (s.equals("scan")) {
					scan.setDouble(1, r.nextInt(900));
					sink += drain(scan.executeQuery());
				} else {
					upd.setInt(1, r.nextInt(ROWS));
					upd.executeUpdate();
					ins.setInt(1, next++);
					ins.setInt(2, r.nextInt(ROWS));
					ins.setInt(3, 1 + r.nextInt(9));
					ins.executeUpdate();
					if (next - first > 5000) {
						del.setInt(1, next - 1000);
						del.executeUpdate();
						first = next - 1000;
					}
				}
			}
			if (sink == 42)
				System.out.println();
		} catch (SQLException e) {
			e.printStackTrace();
		}
	}

	private static long drain(ResultSet rs) throws SQLException {
		long n = 0;
		try (ResultSet r = rs) {
			while (r.next())
				n += r.getString(1).length();
		}
		return n;
	}
}
