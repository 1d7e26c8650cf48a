package oracle;

import java.io.IOException;
import java.util.Map;
import java.util.TreeMap;
import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

/**
 * The servlet of the oracle tests' jetty9 webapp: a little real work per
 * request (a sorted map, formatted text) on top of Jetty's own request path.
 */
public final class HelloServlet extends HttpServlet {
	private static final long serialVersionUID = 1L;

	@Override
	protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
		String who = req.getParameter("who");
		Map<String, Integer> words = new TreeMap<>();
		String text = "the quick brown fox jumps over the lazy dog " + (who == null ? "world" : who);
		for (String w : text.split(" "))
			words.merge(w, 1, Integer::sum);
		StringBuilder sb = new StringBuilder("{");
		for (Map.Entry<String, Integer> e : words.entrySet())
			sb.append(String.format("\"%s\": %d, ", e.getKey(), e.getValue()));
		sb.append("\"path\": \"").append(req.getRequestURI()).append("\"}\n");
		resp.setContentType("application/json");
		resp.setHeader("Cache-Control", "no-store");
		resp.getWriter().write(sb.toString());
	}
}
