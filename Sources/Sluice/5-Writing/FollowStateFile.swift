#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What `sluice follow --state` records at each durable point: the file followed, where the
/// follower stood (a ``FollowedFile/Checkpoint``), and the destination with the length of it
/// that holds exactly the bytes up to there.
package struct FollowState: Hashable, Sendable {
    /// A destination file: which one (device and inode) and the length that holds what the
    /// checkpoint says was read.
    package struct Destination: Hashable, Sendable {
        /// Its name, as given.
        package var path: Pathname
        package var identity: FileIdentity
        package var length: Int64

        package init(path: Pathname, identity: FileIdentity, length: Int64) {
            (self.path, self.identity, self.length) = (path, identity, length)
        }
    }

    /// The followed file's name, as given.
    package var followed: Pathname
    /// The destination file; `nil` for standard output (at least once, not exactly once).
    package var destination: Destination?
    /// Whether the destination is gzip-compressed, a member ending at each durable point.
    package var isCompressed: Bool
    package var checkpoint: FollowedFile.Checkpoint

    package init(followed: Pathname, destination: Destination?, isCompressed: Bool, checkpoint: FollowedFile.Checkpoint) {
        self.followed = followed
        self.destination = destination
        self.isCompressed = isCompressed
        self.checkpoint = checkpoint
    }

    private static let header = "sluice-follow-state 1"

    /// The state as text: a line naming the format and its version; `file` and the followed
    /// name (bytes below 0x21, `%` and from 0x7F written `%XX`); `destination` and the device, inode,
    /// length and name (so written), or `-`; `gzip` and 0 or 1; then the checkpoint's own lines
    /// (``FollowedFile/Checkpoint/encoded``).
    package var encoded: String {
        let target = destination.map { "\($0.identity.device) \($0.identity.inode) \($0.length) " + Self.escape($0.path) } ?? "-"
        return Self.header + "\nfile " + Self.escape(followed) + "\ndestination " + target + "\ngzip " + (isCompressed ? "1" : "0")
            + "\n" + checkpoint.encoded
    }

    /// Reads back what ``encoded`` wrote; `nil` for anything else.
    package init?(encoded: String) {
        let lines = encoded.split(separator: "\n", maxSplits: 4, omittingEmptySubsequences: false)
        guard lines.count == 5, lines[0] == Substring(Self.header), lines[1].hasPrefix("file "), lines[2].hasPrefix("destination "),
            lines[3] == "gzip 0" || lines[3] == "gzip 1", let followed = Self.unescape(lines[1].dropFirst(5)),
            let checkpoint = FollowedFile.Checkpoint(encoded: String(lines[4]))
        else { return nil }
        let target = lines[2].dropFirst("destination ".count)
        if target == "-" {
            destination = nil
        } else {
            let fields = target.split(separator: " ")
            guard fields.count == 4, let device = UInt64(fields[0]), let inode = UInt64(fields[1]), let length = Int64(fields[2]),
                length >= 0, let path = Self.unescape(fields[3])
            else { return nil }
            destination = Destination(path: path, identity: FileIdentity(device: device, inode: inode), length: length)
        }
        self.followed = followed
        isCompressed = lines[3] == "gzip 1"
        self.checkpoint = checkpoint
    }

    private static func escape(_ path: Pathname) -> String {
        var text = ""
        for byte in path.bytes {
            if byte <= 0x20 || byte == UInt8(ascii: "%") || byte >= 0x7F {
                text += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xF, radix: 16, uppercase: true)
            } else {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            }
        }
        return text
    }

    private static func unescape(_ text: Substring) -> Pathname? {
        var bytes: [UInt8] = []
        var iterator = text.unicodeScalars.makeIterator()
        while let scalar = iterator.next() {
            guard scalar == "%" else {
                guard scalar.value < 0x7F else { return nil }
                bytes.append(UInt8(scalar.value))
                continue
            }
            guard let high = iterator.next(), let low = iterator.next(), let byte = UInt8(String([Character(high), Character(low)]), radix: 16)
            else { return nil }
            bytes.append(byte)
        }
        return bytes.isEmpty ? nil : Pathname(bytes: bytes)
    }
}

/// The state file of `sluice follow --state`, held locked (`flock(2)`, exclusive) while a
/// follower uses it, and replaced atomically and durably at each durable point.
///
/// A replacement is written to `.<name>.new` beside it (a name that a file named after the
/// followed one never has), locked, written, `fsync`ed, renamed over the state, and the
/// directory `fsync`ed: the name always holds a complete state, and always one locked by the
/// follower that wrote it (a second follower that locked a file the name no longer holds tries
/// again). Any thread; a replacement holds a lock while it runs.
package final class FollowStateFile: Sendable {
    package let path: Pathname
    /// The descriptor that holds the lock, and the file's device and inode.
    private let held: LockedValue<(descriptor: Descriptor, identity: FileIdentity)>
    private let system: SystemCalls
    /// Whether ``lock(_:system:)`` created the file, and no state was stored since.
    private let isNew: LockedValue<Bool>

    /// The state file's device and inode now.
    package var identity: FileIdentity { held.withLock { $0.identity } }

    private init(path: Pathname, descriptor: Descriptor, identity: FileIdentity, isNew: Bool, system: SystemCalls) {
        (self.path, self.system) = (path, system)
        held = LockedValue((descriptor, identity))
        self.isNew = LockedValue(isNew)
    }

    /// Lets go of the lock (`flock(2)`, `LOCK_UN`) now, rather than when the last reference
    /// goes: a follower that ended, for the next on the same state in the same process.
    package func unlock() {
        _ = held.withLock { flock($0.descriptor.rawValue, LOCK_UN) }
    }

    /// Removes the state file if this follower created it and stored nothing in it: a command
    /// refused before its first record leaves nothing behind.
    package func removeIfNeverStored() {
        guard isNew.withLock({ $0 }) else { return }
        _ = path.withCString { unlink($0) }
    }

    deinit { try? held.withLock { $0.descriptor }.close(system: system) }

    /// Opens the state at `path`, creating it empty (mode 0600) if there is none, and locks it.
    ///
    /// - Returns: the file, and the state it holds (`nil` when it is empty: no durable point yet).
    /// - Throws: ``FileError``: code `alreadyExists` (operation `flock`) when another follower
    ///   holds it; `unsupported` for a file that is not a state of `sluice follow`; an `open`,
    ///   `read` or `flock` failure with its errno.
    package static func lock(_ path: Pathname, system: SystemCalls = .live) throws(FileError) -> (FollowStateFile, FollowState?) {
        while true {
            var isNew = false
            let descriptor: Descriptor
            do { descriptor = try Descriptor.open(path, O_RDWR, system: system) } catch where error.code == .notFound {
                do { descriptor = try Descriptor.open(path, O_RDWR | O_CREAT | O_EXCL, permissions: 0o600, system: system) } catch where
                    error.code == .alreadyExists
                { continue }
                isNew = true
            }
            do throws(FileError) {
                guard let identity = try lockedIdentity(descriptor, path: path) else {
                    try? descriptor.close(system: system)
                    continue  // replaced between the open and the lock: the name holds another now
                }
                let file = FollowStateFile(path: path, descriptor: descriptor, identity: identity, isNew: isNew, system: system)
                return (file, try file.read())
            } catch {
                try? descriptor.close(system: system)
                throw error
            }
        }
    }

    /// Locks `descriptor`; its identity if `path` still names it, else `nil`.
    private static func lockedIdentity(_ descriptor: Descriptor, path: Pathname) throws(FileError) -> FileIdentity? {
        if flock(descriptor.rawValue, LOCK_EX | LOCK_NB) != 0 {
            let error = ErrorNumber(rawValue: errno)
            guard error == ErrorNumber(rawValue: EWOULDBLOCK) else { throw FileError(.flock, path: path, errno: error) }
            throw FileError(code: .alreadyExists, operation: .flock, path: path, reason: "another sluice follow is using this state")
        }
        let held: FileIdentity
        do { held = try descriptor.status().identity } catch { throw FileError.fstat(path: path, errno: error) }
        let named = try? FileStatus.of(path).identity
        return held == named ? held : nil
    }

    private func read() throws(FileError) -> FollowState? {
        let descriptor = held.withLock { $0.descriptor }
        var bytes: [UInt8] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 1)
        defer { buffer.deallocate() }
        while true {
            let count: Int
            do { count = try descriptor.read(fromAbsoluteOffset: Int64(bytes.count), into: buffer) } catch {
                throw FileError.read(path: path, errno: error)
            }
            if count == 0 { break }
            bytes += buffer.prefix(count)
        }
        if bytes.isEmpty { return nil }
        guard let text = String(validating: bytes, as: UTF8.self), let state = FollowState(encoded: text) else {
            throw FileError(code: .unsupported, operation: .read, path: path, reason: "not a state file of sluice follow")
        }
        return state
    }

    /// Replaces the state by `state`, atomically and durably, keeping the lock.
    ///
    /// - Throws: ``FileError`` of the `open`, `write`, `fsync`, `rename` or directory `fsync`
    ///   with its errno; the state at the name is then the one before (or, for a failed
    ///   directory `fsync`, either). A failed replacement leaves `.<name>.new`, which the next
    ///   one truncates and reuses (removing it would let a crash bring back its content under a
    ///   name the next replacement creates anew).
    package func store(_ state: FollowState) throws(FileError) {
        try held.withLock { (held) throws(FileError) in try replace(&held, with: state) }
    }

    private func replace(_ held: inout (descriptor: Descriptor, identity: FileIdentity), with state: FollowState) throws(FileError) {
        let temporary = path.directory.appending(Pathname("." + path.lastComponent.description + ".new"))
        let next = try Descriptor.open(temporary, O_RDWR | O_CREAT | O_TRUNC, permissions: 0o600, system: system)
        do throws(FileError) {
            guard flock(next.rawValue, LOCK_EX | LOCK_NB) == 0 else { throw FileError(.flock, path: temporary, errno: ErrorNumber(rawValue: errno)) }
            let text = Array(state.encoded.utf8)
            let written = text.withUnsafeBytes { bytes in
                Result { () throws(ErrorNumber) in try next.write(contentsOf: bytes, system: system) }
            }
            if case .failure(let error) = written { throw FileError.write(path: temporary, errno: error) }
            do { try next.synchronize(system: system) } catch { throw FileError.fsync(path: temporary, errno: error) }
            let renamed = temporary.withCString { from in path.withCString { to in system.rename(from, to, 0) } }
            if case .failure(let error) = renamed { throw FileError.rename(path: path, errno: error) }
        } catch {
            try? next.close(system: system)
            throw error
        }
        isNew.withLock { $0 = false }
        try? held.descriptor.close(system: system)
        held = (next, (try? next.status(system: system).identity) ?? held.identity)
        try Descriptor.synchronizeDirectory(path.directory, system: system)
    }
}
