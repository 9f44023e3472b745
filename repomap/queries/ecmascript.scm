; Patterns JavaScript, TypeScript and TSX share: every language whose query list in
; repomap/languages.py starts with "ecmascript" gets these first. Capture convention:
; repomap/queries/README.md

; --- definitions ---------------------------------------------------------

(function_declaration name: (identifier) @name) @definition.function

(generator_function_declaration name: (identifier) @name) @definition.function

; class and object-literal methods; tags.py makes the ones inside a class `Class.method`
(method_definition
  name: [(property_identifier) (private_property_identifier)] @name) @definition.function

; top-level `const f = () => {}` / `var f = function () {}` (exported or not)
(program
  [(lexical_declaration
     (variable_declarator
       name: (identifier) @name
       value: [(arrow_function) (function_expression) (generator_function)]) @definition.function)
   (variable_declaration
     (variable_declarator
       name: (identifier) @name
       value: [(arrow_function) (function_expression) (generator_function)]) @definition.function)])

(export_statement
  declaration: (lexical_declaration
    (variable_declarator
      name: (identifier) @name
      value: [(arrow_function) (function_expression) (generator_function)]) @definition.function))

; CommonJS / prototype style: `exports.run = function () {}`, `Foo.prototype.bar = () => {}`
(program
  (expression_statement
    (assignment_expression
      left: (member_expression property: (property_identifier) @name)
      right: [(arrow_function) (function_expression)]) @definition.function))

; --- references ----------------------------------------------------------

; calls and `new`, minus the language's own globals (`JSON`, `Promise`, `require`, …)
((call_expression function: (identifier) @reference)
  (#not-match? @reference "^(Array|ArrayBuffer|BigInt|Boolean|Date|Error|EvalError|RangeError|TypeError|Function|Intl|JSON|Map|Math|Number|Object|Promise|Proxy|Reflect|RegExp|Set|String|Symbol|WeakMap|WeakSet|require|parseInt|parseFloat|isNaN|setTimeout|setInterval|clearTimeout|clearInterval|fetch)$"))

(member_expression property: (property_identifier) @reference)

; `Color.Red`, `React.Component`: capitalised objects are modules, classes, enums
((member_expression object: (identifier) @reference)
  (#match? @reference "^[A-Z]")
  (#not-match? @reference "^(Array|ArrayBuffer|BigInt|Boolean|Date|Error|EvalError|RangeError|TypeError|Function|Intl|JSON|Map|Math|Number|Object|Promise|Proxy|Reflect|RegExp|Set|String|Symbol|WeakMap|WeakSet|require|parseInt|parseFloat|isNaN|setTimeout|setInterval|clearTimeout|clearInterval|fetch)$"))

((new_expression constructor: (identifier) @reference)
  (#not-match? @reference "^(Array|ArrayBuffer|BigInt|Boolean|Date|Error|EvalError|RangeError|TypeError|Function|Intl|JSON|Map|Math|Number|Object|Promise|Proxy|Reflect|RegExp|Set|String|Symbol|WeakMap|WeakSet|require|parseInt|parseFloat|isNaN|setTimeout|setInterval|clearTimeout|clearInterval|fetch)$"))

(import_specifier name: (identifier) @reference)

(import_clause (identifier) @reference)
