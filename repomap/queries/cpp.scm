; C++ tags (also used for `.h`). Capture convention: repomap/queries/README.md
; A function's name sits at the bottom of its declarator chain (`T *f()`, `T **f()`,
; `T &f()`); an out-of-class definition `void Foo::bar()` names it through a
; `qualified_identifier` whose innermost scope (`Foo`) is the @scope.

; --- definitions ---------------------------------------------------------

(namespace_definition
  name: [(namespace_identifier) (nested_namespace_specifier)] @name) @definition.namespace

(class_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.class

; explicit specialisations: `template <> class Box<int> { … }`
(class_specifier
  name: (template_type name: (type_identifier) @name)
  body: (field_declaration_list)) @definition.class

(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct

(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct

(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @definition.enum

; `using Polygons = std::vector<Polygon>;`
(alias_declaration name: (type_identifier) @name) @definition.type

; typedefs, as in C
(type_definition
  type: [(struct_specifier !name body: (field_declaration_list))
         (union_specifier !name body: (field_declaration_list))
         (class_specifier !name body: (field_declaration_list))]
  declarator: (type_identifier) @name) @definition.struct

(type_definition
  type: (enum_specifier !name body: (enumerator_list))
  declarator: (type_identifier) @name) @definition.enum

(type_definition
  type: [(struct_specifier name: (_) body: (_))
         (union_specifier name: (_) body: (_))
         (class_specifier name: (_) body: (_))
         (enum_specifier name: (_) body: (_))]
  declarator: (type_identifier) @name @definition.type)

(type_definition
  type: [(primitive_type) (type_identifier) (sized_type_specifier) (qualified_identifier)
         (template_type) (struct_specifier !body) (union_specifier !body)
         (class_specifier !body) (enum_specifier !body)]
  declarator: [(type_identifier) @name
               (pointer_declarator declarator: (type_identifier) @name)
               (function_declarator
                 declarator: (parenthesized_declarator
                   (pointer_declarator declarator: (type_identifier) @name)))]) @definition.type

; free functions, and methods defined inside a class body (tags.py qualifies those)
(function_definition
  declarator: [(function_declarator
                 declarator: [(identifier) (field_identifier) (operator_name)] @name)
               (pointer_declarator
                 declarator: (function_declarator
                   declarator: [(identifier) (field_identifier) (operator_name)] @name))
               (pointer_declarator
                 declarator: (pointer_declarator
                   declarator: (function_declarator
                     declarator: [(identifier) (field_identifier) (operator_name)] @name)))
               (reference_declarator
                 (function_declarator
                   declarator: [(identifier) (field_identifier) (operator_name)] @name))]
  ) @definition.function

; out-of-class definitions: `double Polygon::area() const`, `T &Box<T>::get()`,
; `ns::Foo::Foo(int x)`: the innermost scope (the class) qualifies the name
(function_definition
  declarator: [(function_declarator
                 declarator: [(qualified_identifier
                               scope: [(namespace_identifier) @scope (template_type name: (type_identifier) @scope)]
                               name: [(identifier) (operator_name)] @name)
                             (qualified_identifier
                               name: (qualified_identifier
                                 scope: [(namespace_identifier) @scope (template_type name: (type_identifier) @scope)]
                                 name: [(identifier) (operator_name)] @name))
                             (qualified_identifier
                               name: (qualified_identifier
                                 name: (qualified_identifier
                                   scope: [(namespace_identifier) @scope (template_type name: (type_identifier) @scope)]
                                   name: [(identifier) (operator_name)] @name)))])
               (pointer_declarator
                 declarator: (function_declarator
                   declarator: [(qualified_identifier
                                 scope: [(namespace_identifier) @scope (template_type name: (type_identifier) @scope)]
                                 name: [(identifier) (operator_name)] @name)
                               (qualified_identifier
                                 name: (qualified_identifier
                                   scope: [(namespace_identifier) @scope (template_type name: (type_identifier) @scope)]
                                   name: [(identifier) (operator_name)] @name))
                               (qualified_identifier
                                 name: (qualified_identifier
                                   name: (qualified_identifier
                                     scope: [(namespace_identifier) @scope (template_type name: (type_identifier) @scope)]
                                     name: [(identifier) (operator_name)] @name)))]))
               (reference_declarator
                 (function_declarator
                   declarator: [(qualified_identifier
                                 scope: [(namespace_identifier) @scope (template_type name: (type_identifier) @scope)]
                                 name: [(identifier) (operator_name)] @name)
                               (qualified_identifier
                                 name: (qualified_identifier
                                   scope: [(namespace_identifier) @scope (template_type name: (type_identifier) @scope)]
                                   name: [(identifier) (operator_name)] @name))
                               (qualified_identifier
                                 name: (qualified_identifier
                                   name: (qualified_identifier
                                     scope: [(namespace_identifier) @scope (template_type name: (type_identifier) @scope)]
                                     name: [(identifier) (operator_name)] @name)))]))]
  ) @definition.method

; methods only declared in the class body (the usual header style): `double area() const;`
(field_declaration_list
  (field_declaration
    declarator: [(function_declarator
                   declarator: [(field_identifier) (operator_name)] @name)
                 (pointer_declarator
                   declarator: (function_declarator
                     declarator: [(field_identifier) (operator_name)] @name))
                 (reference_declarator
                   (function_declarator
                     declarator: [(field_identifier) (operator_name)] @name))]) @definition.method)

; constructors only declared in the class body: `explicit Box(int size);`
(field_declaration_list
  (declaration
    declarator: (function_declarator declarator: (identifier) @name)) @definition.method)

; function prototypes at file or namespace level (headers): `int parse(const char *s);`
(translation_unit
  (declaration
    declarator: [(function_declarator declarator: (identifier) @name)
                 (pointer_declarator
                   declarator: (function_declarator declarator: (identifier) @name))
                 (reference_declarator
                   (function_declarator declarator: (identifier) @name))]) @definition.function)

(declaration_list
  (declaration
    declarator: [(function_declarator declarator: (identifier) @name)
                 (pointer_declarator
                   declarator: (function_declarator declarator: (identifier) @name))
                 (reference_declarator
                   (function_declarator declarator: (identifier) @name))]) @definition.function)

; `#define MAX_ITEMS 16`, `#define ERR_IO -5`: the constants a report quotes; function-like
; macros are places of their own
(preproc_def name: (identifier) @name) @definition.constant

(preproc_function_def name: (identifier) @name) @definition.function

; enum members (`ERR_TIMEOUT` in `enum err { … }`), qualified by their enum when it is named
(enumerator name: (identifier) @name) @definition.constant

; --- references ----------------------------------------------------------

; calls: `f()`, `ns::f()`, `Box<int>::make()`, minus the C library's (`printf`, …)
((call_expression
   function: [(identifier) @reference
              (template_function name: (identifier) @reference)])
  (#not-match? @reference "^(printf|fprintf|sprintf|snprintf|vprintf|vfprintf|vsnprintf|puts|fputs|putchar|scanf|sscanf|fopen|fclose|fread|fwrite|fgets|fflush|malloc|calloc|realloc|free|memcpy|memmove|memset|memcmp|strlen|strcmp|strncmp|strcpy|strncpy|strcat|strncat|strchr|strrchr|strstr|strdup|atoi|atol|strtol|strtoul|strtod|exit|abort|assert|sizeof|static_cast|dynamic_cast|const_cast|reinterpret_cast)$"))

; qualified calls, unless into `std::` (`std::move`, `std::make_unique<W>()`)
((call_expression
   function: (qualified_identifier
     scope: (_) @_scope
     name: [(identifier) @reference
            (template_function name: (identifier) @reference)
            (qualified_identifier name: (identifier) @reference)]))
  (#not-eq? @_scope "std"))

; member access and method calls: `p->run()`, `a.x`
(field_expression field: (field_identifier) @reference)

; types in declarations, parameters, fields, return types, `new`, casts, template arguments
(_ type: (type_identifier) @reference)
(_ type: (template_type name: (type_identifier) @reference))
(base_class_clause (template_type name: (type_identifier) @reference))
(qualified_identifier scope: (template_type name: (type_identifier) @reference))
(base_class_clause (type_identifier) @reference)

; `geo::Point`, `Outer::Inner`; the standard library's (`std::vector`) are left out
((qualified_identifier
   scope: (_) @_scope
   name: [(type_identifier) @reference (template_type name: (type_identifier) @reference)])
  (#not-eq? @_scope "std"))

; `struct buffer *b`, `class Foo;`
(struct_specifier name: (type_identifier) @reference !body)
(union_specifier name: (type_identifier) @reference !body)
(class_specifier name: (type_identifier) @reference !body)
(enum_specifier name: (type_identifier) @reference !body)

; scopes: `Polygon::area`, `geo::Point` (the standard library's `std` is left out)
((qualified_identifier scope: (namespace_identifier) @reference)
  (#not-match? @reference "^std$"))
