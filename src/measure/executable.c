/* Which executable is running, without reading it: the GNU build id that
 * the linker wrote into the program (CMakeLists.txt links every executable
 * with --build-id=sha1, a SHA-1 over the linked output), read from the
 * note segment the loader has already mapped. Hashing the file itself
 * (SHA-256 of about 5 MB) takes milliseconds, which a profile worker used
 * to spend before its first evaluation; the build id takes microseconds. */
#include <elf.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>

#include "measure_internal.h"

#if UINTPTR_MAX > 0xffffffffu
typedef Elf64_Phdr phdr_t;
typedef Elf64_Nhdr nhdr_t;
#else
typedef Elf32_Phdr phdr_t;
typedef Elf32_Nhdr nhdr_t;
#endif

static size_t align_up(size_t n, size_t align) { return (n + align - 1) / align * align; }

/* The build id among the notes of one PT_NOTE segment, or NULL. */
static const unsigned char *find_build_id(const unsigned char *p, size_t size, size_t align,
                                          size_t *len)
{
    while (size >= sizeof(nhdr_t)) {
        nhdr_t nh;
        memcpy(&nh, p, sizeof nh);
        size_t name_end = align_up(sizeof nh + nh.n_namesz, align);
        size_t desc_end = align_up(name_end + nh.n_descsz, align);
        if (name_end > size || name_end + nh.n_descsz > size)
            return NULL; /* a damaged note: no answer rather than a wrong one */
        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
            memcmp(p + sizeof nh, "GNU", 4) == 0) {
            *len = nh.n_descsz;
            return p + name_end;
        }
        if (desc_end >= size)
            return NULL;
        p += desc_end;
        size -= desc_end;
    }
    return NULL;
}

bool bl_measure_build_id(char *hex, size_t size)
{
    static const char digits[] = "0123456789abcdef";
    const phdr_t *ph = (const phdr_t *)getauxval(AT_PHDR);
    const size_t n = (size_t)getauxval(AT_PHNUM);
    if (!ph || n == 0 || size == 0)
        return false;
    /* Where the program was loaded: its program headers' address in memory
     * less their address in the file's layout (PT_PHDR). Without PT_PHDR
     * the bias is unknown, and so is the build id. */
    uintptr_t bias = 0;
    bool have_bias = false;
    for (size_t i = 0; i < n; i++)
        if (ph[i].p_type == PT_PHDR) {
            bias = (uintptr_t)ph - (uintptr_t)ph[i].p_vaddr;
            have_bias = true;
        }
    if (!have_bias)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (ph[i].p_type != PT_NOTE)
            continue;
        size_t len = 0;
        const unsigned char *id =
            find_build_id((const unsigned char *)(bias + (uintptr_t)ph[i].p_vaddr),
                          (size_t)ph[i].p_memsz, ph[i].p_align == 8 ? 8 : 4, &len);
        if (!id || len == 0 || 2 * len + 1 > size)
            continue;
        for (size_t k = 0; k < len; k++) {
            hex[2 * k] = digits[id[k] >> 4];
            hex[2 * k + 1] = digits[id[k] & 15];
        }
        hex[2 * len] = '\0';
        return true;
    }
    return false;
}
