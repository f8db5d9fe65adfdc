import Foundation

/// The files the program copies, made in `DIRECTORY/sources`, and the directory the copies go
/// to, `DIRECTORY/copies`; and the checks of the copies.
struct Samples {
    let image: String
    let files: [String]
    let tree: String
    let large: String
    let copies: String

    init(in directory: String) throws {
        let manager = FileManager.default
        let sources = directory + "/sources"
        copies = directory + "/copies"
        try manager.createDirectory(atPath: sources, withIntermediateDirectories: true)
        try manager.createDirectory(atPath: copies, withIntermediateDirectories: false)

        image = sources + "/disk.img"
        try Self.bytes(8 << 20, seed: 1).write(to: URL(fileURLWithPath: image))
        try manager.createDirectory(atPath: sources + "/files", withIntermediateDirectories: false)
        files = try (0..<12).map { index in
            let path = sources + "/files/file-\(index).bin"
            try Self.bytes((index + 1) * 100_000, seed: UInt8(index)).write(to: URL(fileURLWithPath: path))
            return path
        }

        // A tree: two directories of photos, a symbolic link and a hard link.
        tree = sources + "/photos"
        for year in ["2024", "2025"] {
            try manager.createDirectory(atPath: tree + "/" + year, withIntermediateDirectories: true)
            for day in 1...3 {
                try Self.bytes(day * 50_000, seed: UInt8(day)).write(to: URL(fileURLWithPath: "\(tree)/\(year)/day-\(day).jpg"))
            }
        }
        try manager.createSymbolicLink(atPath: tree + "/latest", withDestinationPath: "2025/day-3.jpg")
        try manager.linkItem(atPath: tree + "/2024/day-1.jpg", toPath: tree + "/2025/also-day-1.jpg")

        large = sources + "/large.bin"
        try Self.bytes(16 << 20, seed: 9).write(to: URL(fileURLWithPath: large))
    }

    /// `count` bytes of a pattern that `seed` varies.
    static func bytes(_ count: Int, seed: UInt8) -> Data {
        let block = (0..<(64 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 31) ^ seed }
        var data = Data(capacity: count)
        while data.count < count { data.append(contentsOf: block.prefix(count - data.count)) }
        return data
    }
}

struct CheckFailed: Error, CustomStringConvertible {
    let description: String
}

/// Throws unless the two files hold the same bytes.
func expectSameFile(_ source: String, _ copy: String) throws {
    guard FileManager.default.contentsEqual(atPath: source, andPath: copy) else {
        throw CheckFailed(description: "\(copy) is not a copy of \(source)")
    }
}

/// Throws unless the two trees hold the same names, the same bytes and the same links, and
/// unless each hard link of the source is one in the copy.
func expectSameTree(_ source: String, _ copy: String) throws {
    let manager = FileManager.default
    let names = try manager.subpathsOfDirectory(atPath: source).sorted()
    guard try manager.subpathsOfDirectory(atPath: copy).sorted() == names else {
        throw CheckFailed(description: "\(copy) does not hold the names of \(source)")
    }
    var inodes: [Int: Int] = [:]  // a source's inode -> the copy's
    for name in names {
        let attributes = try manager.attributesOfItem(atPath: source + "/" + name)
        let copied = try manager.attributesOfItem(atPath: copy + "/" + name)
        guard attributes[.type] as? FileAttributeType == copied[.type] as? FileAttributeType,
            attributes[.posixPermissions] as? Int == copied[.posixPermissions] as? Int
        else { throw CheckFailed(description: "\(copy)/\(name): not of the same type or mode") }
        if attributes[.type] as? FileAttributeType == .typeSymbolicLink {
            let target = try manager.destinationOfSymbolicLink(atPath: source + "/" + name)
            guard try manager.destinationOfSymbolicLink(atPath: copy + "/" + name) == target else {
                throw CheckFailed(description: "\(copy)/\(name): not the same link")
            }
        } else if attributes[.type] as? FileAttributeType == .typeRegular {
            try expectSameFile(source + "/" + name, copy + "/" + name)
            let (inode, copiedInode) = (attributes[.systemFileNumber] as! Int, copied[.systemFileNumber] as! Int)
            guard inodes[inode, default: copiedInode] == copiedInode else {
                throw CheckFailed(description: "\(copy)/\(name): the hard link was not kept")
            }
            inodes[inode] = copiedInode
        }
    }
}
