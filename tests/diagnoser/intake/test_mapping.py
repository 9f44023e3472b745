from __future__ import annotations

from diagnoser.intake.mapping import map_frames
from diagnoser.intake.packages import read_packages
from diagnoser.intake.report import Frame
from repomap import Repository
from tests.conftest import GOLDEN_REPO, MakeRepo

FILES = [
    "notes/store.py",
    "notes/api.py",
    "web/app.js",
    "android/app/src/main/java/com/acme/notes/NoteRepository.java",
    "lib/cart.rb",
]


def test_suffix_module_and_library_frames() -> None:
    mapped = map_frames(
        [
            Frame(
                file="/srv/app/.venv/lib/python3.11/site-packages/django/db/models/query.py",
                line=248,
            ),
            Frame(file="/home/ci/build/notes/store.py", line=18, function="get"),
            Frame(file="C:\\work\\notes\\api.py", line=8),
            Frame(file="https://cdn.example.com/static/web/app.js?v=3", line=9, column=4),
            Frame(file="webpack:///./web/app.js", line=9),
            Frame(file="NoteRepository.java", line=12, module="com.acme.notes.NoteRepository"),
            Frame(file="ArrayList.java", line=437, module="java.util.ArrayList"),
            Frame(file="node:internal/process/task_queues", line=95),
            Frame(function="main"),
            Frame(file="/somewhere/else/unknown.py", line=3),
        ],
        FILES,
    )
    assert [(m.repo_path, m.in_app) for m in mapped] == [
        (None, False),
        ("notes/store.py", True),
        ("notes/api.py", True),
        ("web/app.js", True),
        ("web/app.js", True),
        ("android/app/src/main/java/com/acme/notes/NoteRepository.java", True),
        (None, False),
        (None, False),
        (None, False),
        (None, False),
    ]
    assert mapped[0].unmapped_reason == "library or runtime frame"
    assert mapped[8].unmapped_reason == "the frame names no file or module"
    assert mapped[9].unmapped_reason == "no repository file matches '/somewhere/else/unknown.py'"


def test_a_jvm_frame_maps_by_its_package_before_the_bare_file_name() -> None:
    files = [
        "src/java/org/apache/commons/lang/NumberUtils.java",
        "src/java/org/apache/commons/lang/math/NumberUtils.java",
        "src/main/kotlin/com/acme/Cart.kt",
    ]
    frames = [
        Frame(
            file="NumberUtils.java",
            line=542,
            module="org.apache.commons.lang.math.NumberUtils",
            function="createNumber",
        ),
        Frame(file="NumberUtils.java", line=3, module="org.apache.commons.lang.NumberUtils"),
        Frame(file="Cart.kt", line=9, module="com.elsewhere.Cart"),  # package unknown: the name
    ]
    assert [m.repo_path for m in map_frames(frames, files)] == [
        "src/java/org/apache/commons/lang/math/NumberUtils.java",
        "src/java/org/apache/commons/lang/NumberUtils.java",
        "src/main/kotlin/com/acme/Cart.kt",
    ]


def test_python_module_maps_to_a_file() -> None:
    mapped = map_frames([Frame(module="notes.store", function="get", line=18)], FILES)
    assert mapped[0].repo_path == "notes/store.py"


def test_enclosing_definition_comes_from_the_index(home: object) -> None:
    index = Repository.open(GOLDEN_REPO).index
    mapped = map_frames([Frame(file="/deploy/notes/store.py", line=20)], index.files, index)
    assert (mapped[0].repo_path, mapped[0].symbol) == ("notes/store.py", "NoteStore.get")


def test_installed_copy_of_the_repository_itself_maps() -> None:
    files = ["django/db/models/query.py", "tests/test_query.py"]
    mapped = map_frames(
        [
            Frame(file="/venv/lib/python3.11/site-packages/django/db/models/query.py", line=248),
            Frame(file="/venv/lib/python3.11/site-packages/other/db/models/query.py", line=1),
            Frame(file="/venv/lib/python3.11/site-packages/query.py", line=1),
            Frame(file="/py2/local/lib/python2.7/site-packages/django/db/models/query.pyc"),
        ],
        files,
    )
    assert [m.repo_path for m in mapped] == [
        "django/db/models/query.py",
        None,
        None,
        "django/db/models/query.py",
    ]


OWN_FILES = [
    "lib/utils.js", "packages/ui/lib/button.js", "command.go", "tools/gen/main.go",
    "crates/toml/src/de.rs", "tokio/src/runtime/park.rs", "lib/rack/utils.rb",
]  # fmt: skip
OWN_PACKAGES = read_packages({
    "package.json": '{"name": "axios"}',
    "packages/ui/package.json": '{"name": "@acme/ui"}',
    "go.mod": "module github.com/spf13/cobra\n",
    "tools/go.mod": "module github.com/Azure/gen-tools\n",
    "crates/toml/Cargo.toml": '[package]\nname = "toml"\n',
    "tokio/Cargo.toml": '[package]\nname = "tokio"\n',
    "rack.gemspec": 's.name = "rack"\n',
})  # fmt: skip


def test_an_installed_copy_of_the_repositorys_own_package_maps_onto_it() -> None:
    frames = [
        Frame(file="/srv/app/node_modules/axios/lib/utils.js", line=3),
        Frame(file="/srv/app/node_modules/@acme/ui/lib/button.js", line=3),
        Frame(
            file="/root/go/pkg/mod/github.com/spf13/cobra@v1.6.1/command.go",
            line=123, function="(*Command).execute", module="github.com/spf13/cobra",
        ),
        Frame(file="/root/go/pkg/mod/github.com/!azure/gen-tools@v0.2.0/gen/main.go", line=9),
        Frame(
            file="/root/.cargo/registry/src/index.crates.io-6f17d22bba15001f/toml-0.5.9/src/de.rs",
            line=100, module="toml::de::Deserializer",
        ),
        Frame(file="/usr/lib/ruby/gems/3.0.0/gems/rack-2.2.3/lib/rack/utils.rb", line=42),
        Frame(
            file="/home/u/tokio/tokio/src/runtime/park.rs", line=10, module="tokio::runtime::park"
        ),
        Frame(
            file="/home/u/src/cobra/command.go", line=123, function="(*Command).execute",
            module="github.com/spf13/cobra",
        ),
    ]  # fmt: skip
    mapped = map_frames(frames, OWN_FILES, packages=OWN_PACKAGES)
    assert [(m.repo_path, m.in_app) for m in mapped] == [
        ("lib/utils.js", True), ("packages/ui/lib/button.js", True), ("command.go", True),
        ("tools/gen/main.go", True), ("crates/toml/src/de.rs", True),
        ("lib/rack/utils.rb", True), ("tokio/src/runtime/park.rs", True), ("command.go", True),
    ]  # fmt: skip
    without = map_frames(frames, OWN_FILES)
    assert [m.in_app for m in without] == [False] * (len(frames) - 1) + [True]


def test_other_installed_packages_stay_library_frames() -> None:
    frames = [
        Frame(file="/srv/app/node_modules/lodash/lib/utils.js", line=3),
        Frame(file="/srv/app/node_modules/axios-retry/lib/utils.js", line=3),
        Frame(file="/root/go/pkg/mod/github.com/spf13/cobra-cli@v1.3.0/command.go", line=1),
        Frame(file="/root/.cargo/registry/src/index.crates.io-x/serde-1.0.1/src/de.rs", line=1),
        Frame(file="/usr/lib/ruby/gems/3.0.0/gems/rack-test-2.1.0/lib/rack/utils.rb", line=4),
        Frame(file="/srv/app/node_modules/axios/lib/missing.js", line=3),
        Frame(file="ArrayList.java", line=437, module="java.util.ArrayList"),
    ]  # fmt: skip
    mapped = map_frames(frames, OWN_FILES, packages=OWN_PACKAGES)
    assert [m.in_app for m in mapped] == [False] * len(frames)


def test_a_runtime_module_is_in_app_only_when_the_repository_holds_its_whole_path() -> None:
    files = ["src/main/java/com/acme/util/List.java", "src/main/kotlin/kotlinx/coroutines/Job.kt"]
    mapped = map_frames(
        [
            Frame(file="List.java", line=3, module="java.util.List"),
            Frame(file="Job.kt", line=7, module="kotlinx.coroutines.JobSupport"),
        ],
        files,
    )
    assert [(m.repo_path, m.in_app) for m in mapped] == [
        (None, False), ("src/main/kotlin/kotlinx/coroutines/Job.kt", True),
    ]  # fmt: skip


def test_c_system_headers_glibc_and_the_sanitizer_runtime_are_library_frames() -> None:
    files = [
        "pngread.c",
        "contrib/raise.c",
        "src/bits/stl_vector.h",
        "compat/asan_malloc_linux.cpp",
    ]
    mapped = map_frames(
        [
            Frame(file="/src/libpng/pngread.c", line=534, function="png_read_row"),
            Frame(file="/usr/include/c++/12/bits/stl_vector.h", line=1124),
            Frame(file="bits/stl_vector.h", line=1124),
            Frame(file="../sysdeps/unix/sysv/linux/raise.c", line=54),
            Frame(file="/src/llvm-project/compiler-rt/lib/asan/asan_malloc_linux.cpp", line=69),
            Frame(file="/build/gcc/libstdc++-v3/include/bits/stl_vector.h", line=1124),
            Frame(file="/usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h", line=3),
            Frame(function="__libc_start_main"),
        ],
        files,
    )
    assert [(m.repo_path, m.in_app) for m in mapped] == [("pngread.c", True)] + [(None, False)] * 7
    assert {m.unmapped_reason for m in mapped[1:-1]} == {"library or runtime frame"}


def test_the_sanitizer_runtime_maps_when_the_repository_is_llvm_itself() -> None:
    path = "compiler-rt/lib/asan/asan_malloc_linux.cpp"
    (mapped,) = map_frames([Frame(file=f"/src/llvm-project/{path}", line=69)], [path])
    assert (mapped.repo_path, mapped.in_app) == (path, True)


NATIVE = {
    "src/core/pikepdf.h": "bool objecthandle_equal(Handle a, Handle b);\nvoid reset(Handle h);\n",
    "src/core/object_equality.cpp": (
        "bool objecthandle_equal(Handle a, Handle b) {\n    return same(a, b);\n}\n"
        "void reset(Handle h) {}\n"
    ),
    "src/core/object.cpp": "void reset(Handle h) {}\nint main() { return 0; }\n",
}


def test_a_frame_without_a_file_maps_by_the_function_only_one_file_defines(
    make_repo: MakeRepo, home: object
) -> None:
    index = Repository.open(make_repo(NATIVE)).index
    mapped = map_frames(
        [
            Frame(function="objecthandle_equal", language="cpp"),  # and a prototype in a header
            Frame(function="reset", language="cpp"),  # two source files define it
            Frame(function="main", language="cpp"),  # too common a name to say anything
            Frame(function="PyUnicode_FromFormatV", language="cpp"),  # not ours
        ],
        index.files,
        index,
    )
    assert [(m.repo_path, m.symbol, m.in_app) for m in mapped] == [
        ("src/core/object_equality.cpp", "objecthandle_equal", True),
        (None, None, False),
        (None, None, False),
        (None, None, False),
    ]
