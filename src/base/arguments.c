// weft: required-argument checks (see arguments.h).
#include "base/arguments.h"

#include <string.h>

weft_status_t weft_arguments_null_error(const char* function,
                                        const char* names, uint32_t index) {
  // Walk to entry |index| of "a,b,c".
  const char* name = names;
  for (uint32_t i = 0; i < index && name; ++i) {
    name = strchr(name, ',');
    if (name) ++name;
  }
  if (!name) name = "an argument";
  const char* end = strchr(name, ',');
  int length = end ? (int)(end - name) : (int)strlen(name);
  return weft_status_make_(__FILE__, __LINE__, WEFT_STATUS_INVALID_ARGUMENT,
                           "%s: %.*s is NULL", function, length, name);
}
