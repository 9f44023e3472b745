; Rust tags. Capture convention: repomap/queries/README.md

; --- definitions ---------------------------------------------------------

(struct_item name: (type_identifier) @name) @definition.struct

(union_item name: (type_identifier) @name) @definition.struct

(enum_item name: (type_identifier) @name) @definition.enum

(trait_item name: (type_identifier) @name) @definition.trait

(type_item name: (type_identifier) @name) @definition.type

; inline modules only; `mod foo;` just points at another file
(mod_item name: (identifier) @name body: (declaration_list)) @definition.module

(function_item name: (identifier) @name) @definition.function

; trait methods without a body
(function_signature_item name: (identifier) @name) @definition.method

(macro_definition name: (identifier) @name) @definition.function

; `impl Foo`, `impl<T> Foo<T>`, `impl Trait for Foo`, `impl Trait for &Foo`,
; `impl m::Foo`: qualifies the methods inside as `Foo.method`
(impl_item
  type: [(type_identifier) @name
         (generic_type type: (type_identifier) @name)
         (generic_type type: (scoped_type_identifier name: (type_identifier) @name))
         (scoped_type_identifier name: (type_identifier) @name)
         (reference_type type: (type_identifier) @name)
         (reference_type type: (generic_type type: (type_identifier) @name))]) @definition.impl

; `const MAX: usize = 8;`, `static NAME: &str = "x";`
(const_item name: (identifier) @name) @definition.constant

(static_item name: (identifier) @name) @definition.constant

; --- references ----------------------------------------------------------

; calls, minus the prelude's constructors and types (`Some(x)`, `Ok(v)`, `Vec`)
((call_expression function: (identifier) @reference)
  (#not-match? @reference "^(Self|Option|Some|None|Result|Ok|Err|Vec|String|Box|ToString|ToOwned|Default|Clone|Copy|Debug|PartialEq|Eq|PartialOrd|Ord|Hash|Send|Sync|Sized|Fn|FnMut|FnOnce|Iterator|IntoIterator|From|Into|AsRef|AsMut|Drop|Extend)$"))

(generic_function function: (identifier) @reference)

; method calls and field access: `shapes.iter()`, `self.width`
(field_expression field: (field_identifier) @reference)

; paths: `Kind::Square`, `Rect::new()`, `fmt::Display`, `use a::b::C`
(scoped_identifier name: (identifier) @reference)

((scoped_identifier path: (identifier) @reference)
  (#not-match? @reference "^(std|core|alloc|Self|Option|Some|None|Result|Ok|Err|Vec|String|Box|ToString|ToOwned|Default|Clone|Copy|Debug|PartialEq|Eq|PartialOrd|Ord|Hash|Send|Sync|Sized|Fn|FnMut|FnOnce|Iterator|IntoIterator|From|Into|AsRef|AsMut|Drop|Extend)$"))

(scoped_type_identifier name: (type_identifier) @reference)

(use_list (identifier) @reference)

(use_as_clause path: (identifier) @reference)

(use_declaration argument: (identifier) @reference)

(struct_expression name: (type_identifier) @reference)

; type names where they are used (declared names are `name:` of items), minus the
; prelude's (`Option`, `Vec`, `String`, `Clone`, …)
([(_ type: (type_identifier) @reference)
  (_ trait: (type_identifier) @reference)
  (_ return_type: (type_identifier) @reference)
  (_ element: (type_identifier) @reference)
  (type_arguments (type_identifier) @reference)
  (trait_bounds (type_identifier) @reference)
  (bounded_type (type_identifier) @reference)
  (tuple_type (type_identifier) @reference)]
  (#not-match? @reference "^(Self|Option|Some|None|Result|Ok|Err|Vec|String|Box|ToString|ToOwned|Default|Clone|Copy|Debug|PartialEq|Eq|PartialOrd|Ord|Hash|Send|Sync|Sized|Fn|FnMut|FnOnce|Iterator|IntoIterator|From|Into|AsRef|AsMut|Drop|Extend)$"))

; user macros (the standard library's formatting/assertion macros are left out)
((macro_invocation macro: (identifier) @reference)
  (#not-match? @reference "^(assert|assert_eq|assert_ne|debug_assert|debug_assert_eq|debug_assert_ne|dbg|eprint|eprintln|format|format_args|matches|panic|print|println|todo|unimplemented|unreachable|vec|write|writeln)$"))
