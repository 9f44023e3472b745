// Runs single JUnit 4 test methods, named `com.acme.CartTest#total`, and prints each
// failure's stack trace as Java prints it (`Exception: message` / `\tat frame`), so the
// failure reads as a trace. diagnoser's JavaRunner starts it as a single-file source
// program in the sandbox. Exit: 0 all passed, 1 a test failed, 5 none of the named tests
// exists (a name that is no test method, such as a frame's `setUp`, is skipped).
import java.lang.reflect.Method;
import org.junit.Test;
import org.junit.runner.JUnitCore;
import org.junit.runner.Request;
import org.junit.runner.Result;
import org.junit.runner.notification.Failure;

public final class DiagnoserJUnit {
    private static final int FAILED = 1;
    private static final int NOT_FOUND = 5;

    public static void main(String[] ids) {
        int ran = 0;
        boolean failed = false;
        for (String id : ids) {
            int hash = id.indexOf('#');
            String className = hash < 0 ? id : id.substring(0, hash);
            String method = hash < 0 ? null : id.substring(hash + 1);
            Class<?> test;
            try {
                test = Class.forName(className);
            } catch (ClassNotFoundException | LinkageError e) {
                System.out.println("no such test class: " + className);
                continue;
            }
            if (method != null && !isTest(test, method)) {
                System.out.println("no such test method: " + id);
                continue;
            }
            Request request = method == null ? Request.aClass(test) : Request.method(test, method);
            Result result = new JUnitCore().run(request);
            ran += result.getRunCount();
            System.out.println(id + ": " + result.getRunCount() + " run, "
                    + result.getFailureCount() + " failed");
            for (Failure failure : result.getFailures()) {
                failed = true;
                System.out.println("FAILED " + failure.getTestHeader());
                System.out.print(failure.getTrace());
            }
        }
        System.out.flush();
        System.exit(failed ? FAILED : ran == 0 ? NOT_FOUND : 0);
    }

    /** A method of that name is a test: annotated `@Test`, or JUnit 3's `test…`. */
    private static boolean isTest(Class<?> test, String name) {
        for (Class<?> c = test; c != null; c = c.getSuperclass()) {
            for (Method m : c.getDeclaredMethods()) {
                if (m.getName().equals(name)
                        && (name.startsWith("test") || m.isAnnotationPresent(Test.class))) {
                    return true;
                }
            }
        }
        return false;
    }
}
