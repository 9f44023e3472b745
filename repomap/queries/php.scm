; PHP tags. Capture convention: repomap/queries/README.md
; Every identifier is a `name` node; `$variables` are `variable_name` wrapping a `name`.

; --- definitions ---------------------------------------------------------

; `namespace App\Billing { … }` qualifies what it holds; the statement form
; `namespace App\Billing;` does not enclose the declarations after it
(namespace_definition name: (namespace_name) @name) @definition.namespace

(class_declaration name: (name) @name) @definition.class

(interface_declaration name: (name) @name) @definition.interface

(trait_declaration name: (name) @name) @definition.trait

(enum_declaration name: (name) @name) @definition.enum

(function_definition name: (name) @name) @definition.function

(method_declaration name: (name) @name) @definition.method

; --- references ----------------------------------------------------------

(function_call_expression function: [(name) @reference (qualified_name (name) @reference .)])

(member_call_expression name: (name) @reference)

(nullsafe_member_call_expression name: (name) @reference)

(member_access_expression name: (name) @reference)

(nullsafe_member_access_expression name: (name) @reference)

; `Logger::write()`, `Stat::$prop`, `Currency::Euro`
(scoped_call_expression
  scope: [(name) @reference (qualified_name (name) @reference .)]
  name: (name) @reference)

(scoped_property_access_expression scope: [(name) @reference (qualified_name (name) @reference .)])

(class_constant_access_expression . [(name) @reference (qualified_name (name) @reference .)])

(object_creation_expression [(name) @reference (qualified_name (name) @reference .)])

; types: hints, return types, `extends`, `implements`, trait `use`, `catch`
(named_type [(name) @reference (qualified_name (name) @reference .)])

(base_clause [(name) @reference (qualified_name (name) @reference .)])

(class_interface_clause [(name) @reference (qualified_name (name) @reference .)])

(use_declaration [(name) @reference (qualified_name (name) @reference .)])

; `use App\Support\Logger;`, `use Foo\{Bar, Baz as Q};`
(namespace_use_clause . [(name) @reference (qualified_name (name) @reference .)])
