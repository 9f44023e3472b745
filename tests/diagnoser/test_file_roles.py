"""What a file is for, by its path: tests by each ecosystem's convention, examples and
docs, copies."""

from __future__ import annotations

import pytest

from diagnoser.file_roles import is_peripheral, is_secondary, is_test
from repomap.copies import is_vendored, source_stems


def test_peripheral_paths() -> None:
    assert is_peripheral("tests/test_x.py") and is_peripheral("docs/conf.py")
    assert is_peripheral("src/foo_test.py") and is_peripheral("setup.py")
    assert not is_peripheral("android/src/com/demo/notes/Note.kt")
    assert not is_peripheral("lib/matplotlib/rcsetup.py")


@pytest.mark.parametrize(
    "path",
    [
        "pkg/test_models.py", "pkg/models_test.py", "pkg/tests/helpers.py",
        "pkg/testing/compare.py", "conftest.py", "pkg/conftest.py", "spec/cart_spec.rb",
        "web/cart.spec.ts", "web/cart.test.tsx", "web/__tests__/cart.js",
        "src/test/java/com/acme/CartTest.java", "app/src/test/java/com/acme/CartTests.java",
        "cart_test.go",
    ],
)  # fmt: skip
def test_test_files_by_common_conventions(path: str) -> None:
    assert is_test(path)


TESTS_BY_LANGUAGE = {
    "go": [
        "cobra/command_test.go",
        "internal/testdata/config.yaml.go",
        "pkg/testdata/in.go",
        "pkg/fake/testing.go",
        "internal/testutil.go",
    ],
    "javascript": [
        "lib/utils.test.js",
        "src/cart.spec.mjs",
        "src/__tests__/cart.js",
        "src/__snapshots__/cart.js",
        "src/__mocks__/fs.js",
        "e2e/login.e2e-spec.ts",
    ],
    "typescript": ["src/parse.test.ts", "packages/core/src/parse.spec.tsx"],
    "rust": ["tests/integration.rs", "benches/parse.rs", "crates/toml/tests/de.rs"],
    "java": [
        "src/test/java/com/acme/Cart.java",
        "app/src/androidTest/java/com/acme/UiIT.java",
        "core/src/test/java/com/acme/CartTest.java",
        "src/test/java/TestCart.java",
        "src/it/java/com/acme/CartIT.java",
        "src/it/resources/checks/InputCart.java",
        "src/testFixtures/java/com/acme/Carts.java",
    ],
    "kotlin": ["app/src/test/kotlin/com/acme/CartTest.kt"],
    "c": ["test/test_parse.c", "tests/parse.c", "src/unittest/parse.c", "unittests/lex.cpp"],
    "ruby": ["spec/rack/utils_spec.rb", "lib/rack/utils_spec.rb", "spec/support/helpers.rb"],
    "csharp": [
        "src/Acme.Tests/CartTests.cs",
        "src/Acme.Test/Helpers.cs",
        "src/Acme.UnitTests/Cart.cs",
    ],
    "php": ["tests/Unit/CartTest.php", "tests/bootstrap.php"],
    "swift": ["Tests/AcmeTests/CartTests.swift", "Tests/Helpers.swift"],
    "any": ["fixtures/sample.py", "src/__fixtures__/data.js"],
}
PRODUCT_BY_LANGUAGE = {
    "go": ["contest.go", "pkg/attest/attestation.go", "pkg/testify/assert.go"],
    "javascript": ["src/latest.js", "lib/manifest.js", "src/protest.mjs"],
    "typescript": ["src/latest.ts", "src/attestation/verify.ts"],
    "rust": ["src/bench.rs", "src/protest.rs"],
    "java": [
        "src/main/java/com/acme/Contest.java",
        "src/main/java/com/acme/Testimony.java",
        # Maven/Gradle's product tree decides, whatever the name: JUnit's own classes
        "junit-platform-launcher/src/main/java/org/junit/platform/launcher/TestIdentifier.java",
        "junit-jupiter-params/src/main/java/org/junit/jupiter/params/ParameterizedTest.java",
    ],
    "c": ["src/attest.c", "src/latest.h"],
    "ruby": ["lib/rack/spectrum.rb", "lib/inspector.rb"],
    "csharp": ["src/Acme/Cart.cs", "src/Acme.Testing.Core/Cart.cs"],
    "swift": ["Sources/Acme/Cart.swift"],
}


@pytest.mark.parametrize(
    ("language", "path"), [(lang, p) for lang, ps in TESTS_BY_LANGUAGE.items() for p in ps]
)
def test_test_files_by_each_ecosystems_convention(language: str, path: str) -> None:
    assert is_test(path), (language, path)


@pytest.mark.parametrize(
    ("language", "path"), [(lang, p) for lang, ps in PRODUCT_BY_LANGUAGE.items() for p in ps]
)
def test_product_files_that_look_like_tests_are_not(language: str, path: str) -> None:
    assert not is_test(path), (language, path)


@pytest.mark.parametrize(
    "path", ["single_include/nlohmann/json.hpp", "types/index.d.ts", "api/v1/service.pb.go"]
)
def test_copies_are_secondary(path: str) -> None:
    assert is_secondary(path), path


def test_build_output_is_secondary_beside_its_src_twin() -> None:
    assert is_secondary("lib/index.js", source_stems(["src/index.ts"]))
    assert not is_secondary("lib/index.js", source_stems(["src/other.ts"]))
    # compiled at the package root, as zod ships `v3/types.js` beside `src/v3/types.ts`
    assert is_secondary("v3/types.js", source_stems(["src/v3/types.ts"]))
    assert not is_secondary("v3/types.js", source_stems(["src/v4/types.ts"]))
    assert not is_secondary("v3/types.py", source_stems(["src/v3/types.ts"]))


@pytest.mark.parametrize(
    "path",
    [
        "include/cargo/rustversion-1.0.14/src/expr.rs",
        "third/zlib-1.2.13/inflate.c",
        "deps/libuv-v1.44.2-rc1/src/unix/core.c",
    ],
)
def test_a_folder_named_for_a_release_is_a_copy(path: str) -> None:
    assert is_secondary(path), path


def test_a_module_named_with_a_version_inside_is_product() -> None:
    path = "log4j-1.2-api/src/main/java/org/apache/log4j/Category.java"
    assert not is_secondary(path)


@pytest.mark.parametrize(
    "path", ["picocli-examples/src/main/java/Demo.java", "log4j-samples/x/App.java", "samples/a.c"]
)
def test_example_and_sample_modules_are_peripheral(path: str) -> None:
    assert is_peripheral(path), path


def test_product_files_are_not_tests() -> None:
    for path in ("pkg/contest.py", "pkg/attestation.py", "src/main/java/com/acme/Cart.java",
                 "lib/matplotlib/rcsetup.py", "web/latest.js"):  # fmt: skip
        assert not is_test(path), path


def test_vendored_and_minified_assets() -> None:
    for path in ("static/js/jquery-3.5.1.js", "web/d3.min.js", "vendor/six.py",
                 "pkg/third_party/yaml/reader.py", "app/static/admin/js/lib/ui.js",
                 "src/externals/arff.py"):  # fmt: skip
        assert is_vendored(path), path
    for path in ("static/js/app.js", "pkg/version.py", "web/main-page.js", "lib/cart.py"):
        assert not is_vendored(path), path
