// Runs single test methods, named `com.acme.CartTest#total`, on the JUnit Platform (JUnit 5
// Jupiter tests, and JUnit 4 ones through the Vintage engine), and prints each failure's
// stack trace as Java prints it (`Exception: message` / `\tat frame`), so the failure
// reads as a trace. diagnoser's JavaRunner starts it as a single-file source program in
// the sandbox when the class path holds the Platform's launcher. Exit: 0 all passed, 1 a
// test failed, 5 none of the named tests exists (a name that is no test method, such as a
// frame's `setUp`, is skipped).
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

public final class DiagnoserJUnitPlatform {
    private static final int FAILED = 1;
    private static final int NOT_FOUND = 5;

    public static void main(String[] ids) {
        int[] ran = {0};
        boolean[] failed = {false};
        TestExecutionListener listener = new TestExecutionListener() {
            @Override
            public void executionFinished(TestIdentifier test, TestExecutionResult result) {
                if (!test.isTest()) {
                    return;
                }
                ran[0]++;
                if (result.getStatus() != TestExecutionResult.Status.SUCCESSFUL) {
                    failed[0] = true;
                    System.out.println("FAILED " + test.getUniqueId());
                    result.getThrowable().ifPresent(t -> t.printStackTrace(System.out));
                }
            }
        };
        Launcher launcher = LauncherFactory.create();
        for (String id : ids) {
            if (!isTest(id)) {
                System.out.println("no such test method: " + id);
                continue;
            }
            try {
                LauncherDiscoveryRequest request =
                        LauncherDiscoveryRequestBuilder.request().selectors(selectMethod(id)).build();
                int before = ran[0];
                launcher.execute(request, listener);
                System.out.println(id + ": " + (ran[0] - before) + " run");
            } catch (RuntimeException e) {
                System.out.println("no such test: " + id + " (" + e.getMessage() + ")");
            }
        }
        System.out.flush();
        System.exit(failed[0] ? FAILED : ran[0] == 0 ? NOT_FOUND : 0);
    }

    /** `Class#method` is a test: annotated `@Test`, `@ParameterizedTest`, `@TestFactory`…
     * (JUnit 4's or 5's), or JUnit 3's `test…` — not a frame's `setUp`. */
    private static boolean isTest(String id) {
        int hash = id.indexOf('#');
        String name = id.substring(hash + 1);
        Class<?> test;
        try {
            test = Class.forName(id.substring(0, Math.max(hash, 0)));
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
        for (Class<?> c = test; c != null; c = c.getSuperclass()) {
            for (Method m : c.getDeclaredMethods()) {
                if (!m.getName().equals(name)) {
                    continue;
                }
                if (name.startsWith("test")) {
                    return true;
                }
                for (Annotation a : m.getAnnotations()) {
                    String kind = a.annotationType().getSimpleName();
                    if (kind.endsWith("Test") || kind.startsWith("Test")) {
                        return true;
                    }
                }
            }
        }
        return false;
    }
}
