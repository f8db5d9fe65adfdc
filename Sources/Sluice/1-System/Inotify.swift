#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An inotify(7) instance: the changes to watched files and directories, read as events from
/// one descriptor that `poll(2)` waits on. What wakes a followed file's reader instead of a
/// timer.
///
/// Non-blocking and close-on-exec; closed when released. Used by one thread at a time.
final class Inotify: Sendable {
    /// One change: the watch it concerns, what happened (`IN_CREATE`, `IN_MODIFY`, ...), and,
    /// for an event in a watched directory, the name of the entry (without a NUL).
    struct Event: Sendable, Equatable {
        var watch: CInt
        var mask: UInt32
        var name: [UInt8]
    }

    /// The instance's descriptor, readable when events are queued.
    let descriptor: Descriptor

    /// Creates an instance.
    ///
    /// - Throws: ``FileError`` (operation `inotify_init1`) with its errno: `EMFILE` past
    ///   `fs.inotify.max_user_instances`.
    init() throws(FileError) {
        let raw = inotify_init1(CInt(IN_NONBLOCK | IN_CLOEXEC))
        guard raw >= 0 else { throw FileError(.inotifyInit, path: nil, errno: .current) }
        descriptor = Descriptor(rawValue: raw)
    }

    /// Watches `path` for the events of `mask`, following a symbolic link (so
    /// `/proc/self/fd/N` watches the file open on descriptor N, also once it has no name).
    ///
    /// - Returns: the watch's number, which the events carry.
    /// - Throws: ``FileError`` (operation `inotify_add_watch`) with the path and errno (`ENOSPC`
    ///   past `fs.inotify.max_user_watches`).
    func watch(_ path: Pathname, mask: UInt32) throws(FileError) -> CInt {
        let watch = path.withCString { inotify_add_watch(descriptor.rawValue, $0, mask) }
        guard watch >= 0 else {
            throw FileError(.inotifyAddWatch, path: path, errno: .current)
        }
        return watch
    }

    /// Stops watch `watch`; one already gone (its file deleted) is no error.
    func removeWatch(_ watch: CInt) {
        _ = inotify_rm_watch(descriptor.rawValue, watch)
    }

    /// The events queued now, in order; empty when there are none (it never waits).
    func readEvents() -> [Event] {
        var events: [Event] = []
        let size = 8192  // room for many events, and for one with the longest name (NAME_MAX)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let count = (try? descriptor.read(into: buffer)) ?? 0
            guard count > 0 else { return events }
            var offset = 0
            // struct inotify_event: wd, mask, cookie, len, then len bytes of NUL-padded name.
            while offset + 16 <= count {
                let watch = buffer.load(fromByteOffset: offset, as: CInt.self)
                let mask = buffer.load(fromByteOffset: offset + 4, as: UInt32.self)
                let length = Int(buffer.load(fromByteOffset: offset + 12, as: UInt32.self))
                let name = buffer[(offset + 16)..<min(count, offset + 16 + length)].prefix { $0 != 0 }
                events.append(Event(watch: watch, mask: mask, name: Array(name)))
                offset += 16 + length
            }
        }
    }

    deinit {
        try? descriptor.close()
    }
}
