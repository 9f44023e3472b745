; JavaScript (and JSX) tags, after ecmascript.scm. Capture convention: repomap/queries/README.md

; --- definitions ---------------------------------------------------------

(class_declaration name: (identifier) @name) @definition.class

(class name: (identifier) @name) @definition.class

; class fields holding a function: `handleClick = () => {}`
(field_definition
  property: [(property_identifier) (private_property_identifier)] @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function

; --- references ----------------------------------------------------------

(class_heritage (identifier) @reference)

; JSX components (lower-case names are HTML elements)
((jsx_opening_element name: (identifier) @reference)
  (#match? @reference "^[A-Z]"))

((jsx_self_closing_element name: (identifier) @reference)
  (#match? @reference "^[A-Z]"))
