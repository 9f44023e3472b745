; Kotlin tags. Capture convention: repomap/queries/README.md
; The grammar has almost no fields: `class`, `interface` and `enum class` are all
; `class_declaration`, told apart by their keyword child.

; --- definitions ---------------------------------------------------------

(class_declaration "interface" (type_identifier) @name) @definition.interface

(class_declaration "enum" (type_identifier) @name) @definition.enum

; `enum class` also has the `class` keyword: leave it to the pattern above
((class_declaration "class" (type_identifier) @name) @definition.class
  (#not-match? @definition.class "^[^{]*\\benum\\s+class\\b"))

(object_declaration (type_identifier) @name) @definition.object

; `companion object Factory {}` (an unnamed companion does not qualify its members)
(companion_object (type_identifier) @name) @definition.object

(type_alias (type_identifier) @name) @definition.type

(function_declaration !receiver (simple_identifier) @name) @definition.function

; extension functions `fun Note.describe()` are qualified by their receiver type
(function_declaration
  receiver: (receiver_type
    [(user_type . (type_identifier) @scope)
     (nullable_type (user_type . (type_identifier) @scope))])
  (simple_identifier) @name) @definition.method

; --- references ----------------------------------------------------------

; calls, minus the standard library's (`println`, `listOf`, `require`, …)
((call_expression . (simple_identifier) @reference)
  (#not-match? @reference "^(println|print|listOf|listOfNotNull|mutableListOf|arrayListOf|arrayOf|emptyList|mapOf|mutableMapOf|hashMapOf|emptyMap|setOf|mutableSetOf|emptySet|sequenceOf|require|requireNotNull|check|checkNotNull|error|lazy|repeat|run|with|TODO|Pair|Triple)$"))

(navigation_suffix (simple_identifier) @reference)

; `Registry.register()`, `Priority.HIGH`: capitalised receivers are classes and objects
((navigation_expression . (simple_identifier) @reference)
  (#match? @reference "^[A-Z]"))

(callable_reference (simple_identifier) @reference)

; types in annotations, supertypes, parameters, generics, constructor calls,
; minus the standard library's (`String`, `Int`, `List`, …)
((user_type (type_identifier) @reference)
  (#not-match? @reference "^(Any|Nothing|Unit|String|Int|Long|Short|Byte|Double|Float|Boolean|Char|Number|Array|List|MutableList|Map|MutableMap|Set|MutableSet|Collection|Iterable|Sequence|Pair|Triple|Comparable|Throwable|Exception)$"))

(import_header (identifier (simple_identifier) @reference .))
