; C# tags. Capture convention: repomap/queries/README.md
; Declared names and type names are both plain `identifier`; uses are picked by position.

; --- definitions ---------------------------------------------------------

; `namespace Shop.Orders { … }` keeps the dotted name whole. A file-scoped
; `namespace Shop.Orders;` does not enclose the types after it, so it qualifies nothing.
(namespace_declaration name: [(identifier) (qualified_name)] @name) @definition.namespace

(file_scoped_namespace_declaration name: [(identifier) (qualified_name)] @name) @definition.namespace

(class_declaration name: (identifier) @name) @definition.class

(record_declaration name: (identifier) @name) @definition.class

(interface_declaration name: (identifier) @name) @definition.interface

(struct_declaration name: (identifier) @name) @definition.struct

(enum_declaration name: (identifier) @name) @definition.enum

(delegate_declaration name: (identifier) @name) @definition.type

(method_declaration name: (identifier) @name) @definition.method

(constructor_declaration name: (identifier) @name) @definition.method

; --- references ----------------------------------------------------------

(invocation_expression function: (identifier) @reference)

; `Pricing.Sum(lines)`, `item.Amount`
(member_access_expression name: (identifier) @reference)

; types in declarations, parameters, properties, fields, generics, casts, bases, `new`,
; attributes, and capitalised receivers (`Pricing.Sum`), minus the `System` namespace's
; everyday types (`Console`, `String`, `Exception`, …). Namespace names and `using`
; directives are left out: they name no type.
([(member_access_expression expression: (identifier) @reference)
  (_ type: [(identifier) @reference (qualified_name name: (identifier) @reference)])
  (_ returns: [(identifier) @reference (qualified_name name: (identifier) @reference)])
  (generic_name (identifier) @reference)
  (type_argument_list [(identifier) @reference (qualified_name name: (identifier) @reference)])
  (base_list [(identifier) @reference (qualified_name name: (identifier) @reference)])
  (nullable_type (identifier) @reference)
  (attribute name: (identifier) @reference)]
  (#match? @reference "^[A-Z]")
  (#not-match? @reference "^(Console|Math|Convert|String|Object|Int32|Int64|Boolean|Double|Decimal|Guid|DateTime|TimeSpan|Exception|ArgumentException|ArgumentNullException|InvalidOperationException|NotImplementedException|Func|Action|Nullable|Serializable|Obsolete)$"))
