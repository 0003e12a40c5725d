/* model_library.c: a folder of model definitions looked up by a model's
 * published name (model_library.h).
 *
 * A name matches a file when both reduce to the same key: lowercase letters
 * and digits, a parenthetical remark dropped.  Publications spell one model
 * "Qwen3-30B-A3B", "qwen3-30b-a3b" or "Qwen3 30B A3B"; the key makes them one
 * without a table of aliases, and "Llama 3 / 3.1 8B" (two models) matches
 * no file.  The folder is read as given; nothing else is searched.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include "inputs/model_library.h"

#define LIBRARY_KEY_MAX 128

void model_library_key(const char *name, char *key, size_t size)
{
    size_t n = 0;
    const char *paren = strstr(name, " (");
    const char *end = paren != NULL ? paren : name + strlen(name);
    if (size == 0)
        return;
    for (const char *c = name; c < end && n + 1 < size; c++)
        if (isalnum((unsigned char)*c))
            key[n++] = (char)tolower((unsigned char)*c);
    key[n] = '\0';
}

int model_library_find(const char *dir, const char *name, char *path, size_t size)
{
    char want[LIBRARY_KEY_MAX], have[LIBRARY_KEY_MAX], stem[LIBRARY_KEY_MAX];
    int found = 0;
    DIR *d;
    if (dir == NULL || name == NULL)
        return 0;
    model_library_key(name, want, sizeof want);
    if (want[0] == '\0' || (d = opendir(dir)) == NULL)
        return 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len <= 5 || len - 5 >= sizeof stem || strcmp(e->d_name + len - 5, ".json") != 0)
            continue;
        memcpy(stem, e->d_name, len - 5);
        stem[len - 5] = '\0';
        model_library_key(stem, have, sizeof have);
        if (strcmp(have, want) != 0)
            continue;
        if (found++ == 0)
            snprintf(path, size, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    return found > 1 ? -1 : found;
}
