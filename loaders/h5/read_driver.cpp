// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/h5/read_driver.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

#include <fmt/format.h>

namespace wl::h5 {

namespace {

// Global heap collection layout (HDF5 file format specification, "Global Heap"), with 8-byte
// lengths: "GCOL", version 1, 3 reserved bytes, the collection's size in bytes (header
// included); then objects, each a 16-byte header (index 2, reference count 2, reserved 4, size 8)
// and its data padded to 8 bytes. Index 0 is the free space, whose size counts its header and
// which runs to the end of the collection.
constexpr size_t kCollectionHeader = 16;
constexpr size_t kObjectHeader = 16;

void pushError(const std::string& what) {
  H5Epush2(H5E_DEFAULT, __FILE__, "wattline read driver", __LINE__, H5E_ERR_CLS, H5E_VFL,
           H5E_READERROR, "%s", what.c_str());
}

struct ReadFile {
  H5FD_t pub;  // first: HDF5 hands this struct around as an H5FD_t
  int fd = -1;
  haddr_t eoa = 0;
  haddr_t eof = 0;
  dev_t device = 0;
  ino_t inode = 0;
};

ReadFile* self(H5FD_t* f) {
  return reinterpret_cast<ReadFile*>(f);
}
const ReadFile* self(const H5FD_t* f) {
  return reinterpret_cast<const ReadFile*>(f);
}

// The largest address: that of an off_t (as in the sec2 driver).
constexpr haddr_t kMaxAddr = (haddr_t{1} << (8 * sizeof(off_t) - 1)) - 1;

H5FD_t* openReadFile(const char* name, unsigned flags, hid_t /*fapl*/, haddr_t maxaddr) {
  if ((flags & (H5F_ACC_RDWR | H5F_ACC_TRUNC | H5F_ACC_CREAT | H5F_ACC_EXCL)) != 0) {
    pushError("the read driver opens files read-only");
    return nullptr;
  }
  if (maxaddr == 0 || maxaddr == HADDR_UNDEF || maxaddr > kMaxAddr) maxaddr = kMaxAddr;
  const int fd = ::open(name, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    pushError(fmt::format("cannot open: {}", std::strerror(errno)));
    return nullptr;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    pushError(fmt::format("cannot stat: {}", std::strerror(errno)));
    ::close(fd);
    return nullptr;
  }
  auto* file = new ReadFile{};
  file->fd = fd;
  file->eof = static_cast<haddr_t>(st.st_size);
  file->device = st.st_dev;
  file->inode = st.st_ino;
  file->pub.maxaddr = maxaddr;
  return &file->pub;
}

herr_t closeFile(H5FD_t* f) {
  ReadFile* file = self(f);
  const int rc = ::close(file->fd);
  delete file;
  return rc == 0 ? 0 : -1;
}

int compare(const H5FD_t* a, const H5FD_t* b) {
  const ReadFile* x = self(a);
  const ReadFile* y = self(b);
  if (x->device != y->device) return x->device < y->device ? -1 : 1;
  if (x->inode != y->inode) return x->inode < y->inode ? -1 : 1;
  return 0;
}

herr_t query(const H5FD_t* /*f*/, unsigned long* flags) {
  // What the sec2 driver declares, less what only writing needs.
  if (flags)
    *flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_ACCUMULATE_METADATA | H5FD_FEAT_DATA_SIEVE |
             H5FD_FEAT_AGGREGATE_SMALLDATA | H5FD_FEAT_POSIX_COMPAT_HANDLE;
  return 0;
}

haddr_t getEoa(const H5FD_t* f, H5FD_mem_t /*type*/) {
  return self(f)->eoa;
}
herr_t setEoa(H5FD_t* f, H5FD_mem_t /*type*/, haddr_t addr) {
  self(f)->eoa = addr;
  return 0;
}
haddr_t getEof(const H5FD_t* f, H5FD_mem_t /*type*/) {
  return self(f)->eof;
}

herr_t getHandle(H5FD_t* f, hid_t /*fapl*/, void** handle) {
  if (!handle) return -1;
  *handle = &self(f)->fd;
  return 0;
}

herr_t readBlock(H5FD_t* f, H5FD_mem_t /*type*/, hid_t /*dxpl*/, haddr_t addr, size_t size,
                 void* buffer) {
  ReadFile* file = self(f);
  if (addr == HADDR_UNDEF || addr > kMaxAddr || size > kMaxAddr - addr || addr + size > file->eoa) {
    pushError(fmt::format("a read of {} bytes at {} lies past the file's end of allocation ({})",
                          size, addr, file->eoa));
    return -1;
  }
  auto* out = static_cast<uint8_t*>(buffer);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(file->fd, out + done, size - done, static_cast<off_t>(addr + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      pushError(fmt::format("read failed at {}: {}", addr + done, std::strerror(errno)));
      return -1;
    }
    if (n == 0) {  // past the end of the file: zeros, as the sec2 driver gives
      std::memset(out + done, 0, size - done);
      break;
    }
    done += static_cast<size_t>(n);
  }
  // HDF5 reads a global heap collection as raw data (whatever the memory type), so every block
  // is looked at; only one that begins with a collection's signature is walked.
  if (const std::string problem = globalHeapProblem({out, size}); !problem.empty()) {
    pushError(fmt::format("damaged global heap collection at byte {}: {}", addr, problem));
    return -1;
  }
  return 0;
}

herr_t writeBlock(H5FD_t*, H5FD_mem_t, hid_t, haddr_t, size_t, const void*) {
  pushError("the read driver does not write");
  return -1;
}

herr_t nothing(H5FD_t*, hid_t, hbool_t) {
  return 0;
}

H5FD_class_t makeClass() {
  H5FD_class_t c{};
  c.name = "wattline_read";
  c.maxaddr = kMaxAddr;
  c.fc_degree = H5F_CLOSE_WEAK;
  c.open = openReadFile;
  c.close = closeFile;
  c.cmp = compare;
  c.query = query;
  c.get_eoa = getEoa;
  c.set_eoa = setEoa;
  c.get_eof = getEof;
  c.get_handle = getHandle;
  c.read = readBlock;
  c.write = writeBlock;
  c.flush = nothing;
  c.truncate = nothing;
  // Raw data (and the global heap) in one free-space pool, metadata in the other, as sec2.
  for (int t = 0; t < H5FD_MEM_NTYPES; ++t)
    c.fl_map[t] = H5FD_MEM_SUPER;
  c.fl_map[H5FD_MEM_DRAW] = H5FD_MEM_DRAW;
  c.fl_map[H5FD_MEM_GHEAP] = H5FD_MEM_DRAW;
  return c;
}

const H5FD_class_t kClass = makeClass();

}  // namespace

uint64_t globalHeapSize(std::span<const uint8_t> block) {
  if (block.size() < kCollectionHeader || std::memcmp(block.data(), "GCOL", 4) != 0 ||
      block[4] != 1)
    return 0;
  return littleEndian(block.data() + 8, 8);
}

std::string globalHeapProblem(std::span<const uint8_t> block, std::vector<uint64_t>* sizes) {
  const uint64_t size = globalHeapSize(block);
  if (size > block.size() || size < kCollectionHeader) return "";  // read again in full, or HDF5's
  if (sizes) sizes->clear();
  uint64_t at = kCollectionHeader;
  while (at < size) {
    if (size - at < kObjectHeader) break;  // too small for an object: free space
    const uint64_t index = littleEndian(block.data() + at, 2);
    const uint64_t objectSize = littleEndian(block.data() + at + 8, 8);
    if (objectSize > size - at)
      return fmt::format("object {} at offset {} has {} bytes, past the collection's {}", index, at,
                         objectSize, size);
    const uint64_t need =
        index > 0 ? kObjectHeader + ((objectSize + 7) & ~uint64_t{7}) : objectSize;
    if (need == 0) return fmt::format("free space at offset {} has size 0", at);
    if (need > size - at)
      return fmt::format("object {} at offset {} runs past the collection's {} bytes", index, at,
                         size);
    if (sizes && index > 0) {
      if (sizes->size() <= index) sizes->resize(index + 1, kNoObject);
      (*sizes)[index] = objectSize;
    }
    at += need;
  }
  return "";
}

hid_t readDriverAccessList() {
  static hid_t driver = H5I_INVALID_HID;
  static std::once_flag once;
  std::call_once(once, [] { driver = H5FDregister(&kClass); });
  const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (fapl >= 0 && driver >= 0) H5Pset_driver(fapl, driver, nullptr);
  return fapl;
}

}  // namespace wl::h5
