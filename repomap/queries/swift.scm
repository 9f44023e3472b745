; Swift tags. Capture convention: repomap/queries/README.md
; `class`, `struct`, `enum`, `actor` and `extension` are all `class_declaration`, told
; apart by the `declaration_kind` field. The grammar reuses the `name:` field for types
; too (a function's return type is also `name:`), so patterns pin the node type.

; --- definitions ---------------------------------------------------------

(class_declaration declaration_kind: "class" name: (type_identifier) @name) @definition.class

(class_declaration declaration_kind: "actor" name: (type_identifier) @name) @definition.class

(class_declaration declaration_kind: "struct" name: (type_identifier) @name) @definition.struct

(class_declaration declaration_kind: "enum" name: (type_identifier) @name) @definition.enum

; `extension Point { func f() }` → `Point.f`; `extension Foo.Bar<T>` → `Bar`
(class_declaration
  declaration_kind: "extension"
  name: (user_type (type_identifier) @name . (type_arguments)? .)) @definition.impl

(protocol_declaration name: (type_identifier) @name) @definition.interface

(protocol_function_declaration name: (simple_identifier) @name) @definition.method

(function_declaration name: (simple_identifier) @name) @definition.function

; initialisers, named `init`
(init_declaration name: "init" @name) @definition.method

(typealias_declaration name: (type_identifier) @name) @definition.type

; --- references ----------------------------------------------------------

; calls, minus the standard library's free functions (`print`, `max`, `fatalError`, …)
((call_expression . (simple_identifier) @reference)
  (#not-match? @reference "^(print|debugPrint|min|max|abs|zip|stride|fatalError|precondition|preconditionFailure|assert|assertionFailure)$"))

; `points.map`, `canvas.draw()`, `self.points`
(navigation_suffix suffix: (simple_identifier) @reference)

; `Foo.shared`, `Direction.north`: capitalised receivers are types
((navigation_expression target: (simple_identifier) @reference)
  (#match? @reference "^[A-Z]"))

; types in annotations, parameters, return types, inheritance, extensions, generics,
; minus the standard library's (`String`, `Int`, `Array`, `Equatable`, …)
((user_type (type_identifier) @reference)
  (#not-match? @reference "^(Any|AnyObject|Self|Void|Never|String|Substring|Character|Int|Int8|Int16|Int32|Int64|UInt|UInt8|UInt16|UInt32|UInt64|Double|Float|Bool|Array|Dictionary|Set|Optional|Result|Error|Equatable|Hashable|Comparable|Codable|Decodable|Encodable|Identifiable|CustomStringConvertible|Sendable)$"))

(import_declaration (identifier (simple_identifier) @reference .))
