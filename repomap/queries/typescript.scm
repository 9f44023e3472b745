; TypeScript tags, also used for TSX, after ecmascript.scm. Capture convention:
; repomap/queries/README.md
; Must compile against both the `typescript` and the `tsx` grammar: JSX node types exist
; only in `tsx`, so JSX element names are matched structurally (see the end).

; --- definitions ---------------------------------------------------------

(class_declaration name: (type_identifier) @name) @definition.class

(abstract_class_declaration name: (type_identifier) @name) @definition.class

(class name: (type_identifier) @name) @definition.class

(interface_declaration name: (type_identifier) @name) @definition.interface

(type_alias_declaration name: (type_identifier) @name) @definition.type

(enum_declaration name: (identifier) @name) @definition.enum

; `namespace Geometry {}`, `namespace A.B {}`, `module Old {}`
(internal_module name: [(identifier) (nested_identifier)] @name) @definition.namespace

(module name: [(identifier) (nested_identifier)] @name) @definition.namespace

; `declare function f(): T;` and overload signatures
(function_signature name: (identifier) @name) @definition.function

(abstract_method_signature name: (property_identifier) @name) @definition.method

; interface members that are methods
(method_signature name: (property_identifier) @name) @definition.method

; class fields holding a function: `handleClick = () => {}`
(public_field_definition
  name: [(property_identifier) (private_property_identifier)] @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function

; --- references ----------------------------------------------------------

(extends_clause value: (identifier) @reference)

(implements_clause (type_identifier) @reference)

(extends_type_clause type: (type_identifier) @reference)

; type names where they are used (not where they are declared), minus the standard
; library's (`Array`, `Promise`, `Record`, `Partial`, …)
([(type_annotation (type_identifier) @reference)
  (generic_type name: (type_identifier) @reference)
  (type_arguments (type_identifier) @reference)
  (nested_type_identifier name: (type_identifier) @reference)
  (array_type (type_identifier) @reference)
  (union_type (type_identifier) @reference)
  (intersection_type (type_identifier) @reference)
  (tuple_type (type_identifier) @reference)
  (lookup_type (type_identifier) @reference)
  (index_type_query (type_identifier) @reference)
  (constraint (type_identifier) @reference)
  (default_type (type_identifier) @reference)
  (type_predicate type: (type_identifier) @reference)
  (type_alias_declaration value: (type_identifier) @reference)
  (function_type return_type: (type_identifier) @reference)
  (as_expression (type_identifier) @reference)
  (satisfies_expression (type_identifier) @reference)]
  (#not-match? @reference "^(Array|ReadonlyArray|Promise|PromiseLike|Record|Partial|Required|Readonly|Pick|Omit|Exclude|Extract|NonNullable|ReturnType|Parameters|InstanceType|Awaited|Map|Set|WeakMap|WeakSet|Date|Error|RegExp|Function|Object|String|Number|Boolean|Symbol|Iterable|Iterator|AsyncIterable|Generator)$"))

; JSX components in TSX: `<Panel …>` and `<Button … />` are the only nodes whose `name`
; child directly follows `<`. Lower-case names are HTML elements.
((_ "<" . name: (identifier) @reference)
  (#match? @reference "^[A-Z]"))
