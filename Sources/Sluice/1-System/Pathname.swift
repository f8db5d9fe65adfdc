/// A file system path as the kernel sees it: a sequence of bytes without NUL.
///
/// Paths are bytes end to end: a name that is not valid UTF-8 (`caf\xE9.txt`) reaches the
/// system call unchanged. Build one from a `String`, from raw bytes, or from a C string such
/// as an element of `CommandLine.unsafeArgv` (not `CommandLine.arguments`, which replaces invalid
/// UTF-8). The ``description`` escapes every byte that is not printable UTF-8 as `\xHH`, so a
/// message never prints a control character or a broken sequence to a terminal.
public struct Pathname: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The path's bytes, without a terminating NUL.
    public var bytes: [UInt8]

    /// Creates a path from its bytes.
    ///
    /// - Precondition: `bytes` contains no NUL byte.
    public init(bytes: [UInt8]) {
        precondition(!bytes.contains(0), "a path cannot contain a NUL byte")
        self.bytes = bytes
    }

    /// Creates a path from a Swift string (its UTF-8 bytes).
    public init(_ string: String) {
        self.init(bytes: Array(string.utf8))
    }

    /// Creates a path from a NUL-terminated C string, keeping every byte.
    package init(cString: UnsafePointer<CChar>) {
        var count = 0
        while cString[count] != 0 { count += 1 }
        self.bytes = cString.withMemoryRebound(to: UInt8.self, capacity: count) {
            Array(UnsafeBufferPointer(start: $0, count: count))
        }
    }

    /// Creates a path from a string literal, as its UTF-8 bytes.
    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// Whether the path is empty.
    package var isEmpty: Bool { bytes.isEmpty }

    /// The last component (`b` for `a/b`, `b` for `a/b/`), or the whole path when it has no slash.
    public var lastComponent: Pathname {
        var end = bytes.count
        while end > 1 && bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
        let trimmed = bytes[..<end]
        if let slash = trimmed.lastIndex(of: UInt8(ascii: "/")), trimmed.count > 1 {
            return Pathname(bytes: Array(trimmed[(slash + 1)...]))
        }
        return Pathname(bytes: Array(trimmed))
    }

    /// The directory that holds the last component: `a` for `a/b`, `.` for `b`, `/` for `/b`.
    public var directory: Pathname {
        var end = bytes.count
        while end > 1 && bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
        guard let slash = bytes[..<end].lastIndex(of: UInt8(ascii: "/")) else { return "." }
        var stop = slash
        while stop > 0 && bytes[stop - 1] == UInt8(ascii: "/") { stop -= 1 }
        return stop == 0 ? "/" : Pathname(bytes: Array(bytes[..<stop]))
    }

    /// This path with `component` appended after a slash.
    public func appending(_ component: Pathname) -> Pathname {
        if bytes.isEmpty { return component }
        if bytes.last == UInt8(ascii: "/") { return Pathname(bytes: bytes + component.bytes) }
        return Pathname(bytes: bytes + [UInt8(ascii: "/")] + component.bytes)
    }

    /// Whether the last component ends with `suffix` (compared as bytes).
    package func hasSuffix(_ suffix: String) -> Bool {
        let tail = Array(suffix.utf8)
        return bytes.count >= tail.count && Array(bytes.suffix(tail.count)) == tail
    }

    /// This path without its last `count` bytes.
    package func droppingLast(_ count: Int) -> Pathname {
        Pathname(bytes: Array(bytes.dropLast(count)))
    }

    /// Calls `body` with the path as a NUL-terminated C string, valid only during the call.
    package func withCString<R, E: Error>(_ body: (UnsafePointer<CChar>) throws(E) -> R) throws(E) -> R {
        var terminated = bytes
        terminated.append(0)
        return try terminated.withUnsafeBufferPointer { (buffer) throws(E) -> R in
            try buffer.withMemoryRebound(to: CChar.self) { (chars) throws(E) -> R in
                try body(chars.baseAddress!)
            }
        }
    }

    /// The path as text: valid UTF-8 is kept, except control characters (C0, DEL and C1) and
    /// backslashes; every other byte is written as `\xHH`.
    public var description: String {
        var result = ""
        var position = 0
        while position < bytes.count {
            let length = Self.validSequenceLength(bytes, at: position)
            if length == 0 {
                result += Self.escape(bytes[position])
                position += 1
                continue
            }
            let scalarText = String(decoding: bytes[position..<position + length], as: UTF8.self)
            let value = scalarText.unicodeScalars.first!.value
            if value < 0x20 || (0x7F...0x9F).contains(value) || value == 0x5C {
                for byte in bytes[position..<position + length] { result += Self.escape(byte) }
            } else {
                result += scalarText
            }
            position += length
        }
        return result
    }

    /// The length (1...4) of the well-formed UTF-8 sequence at `index`, or 0 if it is not one
    /// (overlong forms, surrogates and values above U+10FFFF are not well-formed).
    private static func validSequenceLength(_ bytes: [UInt8], at index: Int) -> Int {
        let lead = bytes[index]
        let length: Int
        var lower: UInt8 = 0x80, upper: UInt8 = 0xBF
        switch lead {
        case 0x00...0x7F: return 1
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; upper = 0x9F
        case 0xF0: length = 4; lower = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; upper = 0x8F
        default: return 0
        }
        guard index + length <= bytes.count else { return 0 }
        for offset in 1..<length {
            let byte = bytes[index + offset]
            let (low, high) = offset == 1 ? (lower, upper) : (UInt8(0x80), UInt8(0xBF))
            guard byte >= low && byte <= high else { return 0 }
        }
        return length
    }

    private static func escape(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return "\\x" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0xF)])
    }
}
