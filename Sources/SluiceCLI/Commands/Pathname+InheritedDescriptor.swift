#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Sluice

extension Pathname {
    /// The descriptor this process inherited that the path names, if its resolution passes
    /// through `/dev/stdin`, `/dev/stdout`, `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`,
    /// `/proc/thread-self/fd/N` or `/proc/<this process>/fd/N` (symbolic links followed, at most
    /// 40, and the directory that holds each name resolved), and descriptor N is open.
    ///
    /// Such a destination is written to descriptor N in place, as `-` is for standard output:
    /// no `--force`, no truncation, no rename (the Command line article, "Existing
    /// destinations"). `cp` reopens the file behind the descriptor and truncates it; Sluice
    /// writes where the descriptor is, so `sluice copy t /dev/stderr 2>> log` appends as a shell
    /// redirection would.
    var inheritedDescriptor: CInt? {
        var current = self
        for _ in 0..<40 {
            if let number = Self.descriptorNamed(current) { return Self.isOpen(number) ? number : nil }
            if let directory = Self.resolvedDirectory(of: current),
                let number = Self.descriptorNamed(directory.appending(current.lastComponent)) {
                return Self.isOpen(number) ? number : nil
            }
            guard let target = Self.linkTarget(of: current) else { return nil }
            current = target.bytes.first == UInt8(ascii: "/") ? target : current.directory.appending(target)
        }
        return nil
    }

    /// N for the names of descriptor N, else `nil`.
    private static func descriptorNamed(_ path: Pathname) -> CInt? {
        switch path.description {
        case "/dev/stdin": return 0
        case "/dev/stdout": return 1
        case "/dev/stderr": return 2
        default: break
        }
        let directories = ["/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/", "/proc/\(getpid())/fd/"]
        let text = path.description
        guard let directory = directories.first(where: text.hasPrefix) else { return nil }
        let digits = text.dropFirst(directory.count)
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) else { return nil }
        return CInt(digits)
    }

    /// The directory that holds `path`, every link in it resolved (`realpath(3)`), or `nil`.
    private static func resolvedDirectory(of path: Pathname) -> Pathname? {
        guard let resolved = path.directory.withCString({ realpath($0, nil) }) else { return nil }
        defer { free(resolved) }
        return Pathname(String(cString: resolved))
    }

    /// What the symbolic link at `path` points to, or `nil` when `path` is not one.
    static func linkTarget(of path: Pathname) -> Pathname? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = path.withCString { readlink($0, &buffer, buffer.count - 1) }
        guard count > 0 else { return nil }
        return Pathname(bytes: buffer[..<count].map { UInt8(bitPattern: $0) })
    }

    /// Whether descriptor `number` is open in this process.
    private static func isOpen(_ number: CInt) -> Bool {
        fcntl(number, F_GETFD) != -1
    }
}
