#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@testable import Sluice
import SluiceTestSupport
import Testing

/// Directory descriptors and the `*at` calls: names as bytes, entries made and read relative to
/// a descriptor, extended attributes through the short `/proc/self/fd` path.
@Suite struct DirectoryHandleTests {
    @Test func listsNamesAsBytesIncludingLongAndNonUTF8Ones() async throws {
        try await withScratchDirectory { scratch in
            let directory = scratch.path
            let odd = Pathname(bytes: Array("caf".utf8) + [0xE9])
            let long = Pathname(String(repeating: "x", count: 255))
            try writeFile(directory.appending(odd), [1])
            try writeFile(directory.appending(long), [2])
            let handle = try DirectoryHandle.open(directory)
            #expect(Set(try handle.entryNames()) == [odd, long])
            // Listing twice gives the same names: the handle's own offset never moves.
            #expect(Set(try handle.entryNames()) == [odd, long])
            #expect(try handle.status(of: long).size == 1)
        }
    }

    @Test func makesAndReadsEntriesRelativeToTheDescriptor() async throws {
        try await withScratchDirectory { scratch in
            let directory = scratch.path
            let handle = try DirectoryHandle.open(directory)
            try handle.makeDirectory("sub", permissions: 0o700)
            let sub = try handle.openDirectory("sub")
            #expect(sub.path == directory.appending("sub"))
            try sub.makeSymbolicLink("link", target: Pathname(bytes: [0xFF, 0x2F, 0x61]))
            #expect(try sub.linkTarget(of: "link") == Pathname(bytes: [0xFF, 0x2F, 0x61]))
            #expect(try sub.status(of: "link").kind == .symbolicLink)
            try sub.makeNode("fifo", mode: S_IFIFO | 0o600)
            #expect(try sub.status(of: "fifo").kind == .fifo)
            try writeFile(directory.appending("file"), [7])
            try sub.makeHardLink("hard", to: "file", in: handle)
            #expect(try sub.status(of: "hard").isSameFile(as: try handle.status(of: "file")))
            let time = FileTime(seconds: 1_000_000_000, nanoseconds: 123_456_789)
            try sub.setTimes(of: "link", access: time, modification: time)
            #expect(try sub.status(of: "link").modificationTime == time)
            try sub.setPermissions(of: "fifo", to: 0o640)
            #expect(try sub.status(of: "fifo").permissions == 0o640)
            #expect(throws: FileError.self) { try sub.status(of: "missing") }
            do throws(FileError) {
                _ = try sub.status(of: "missing")
            } catch {
                #expect(error.path == directory.appending("sub/missing"))
                #expect(error.errno == .noSuchFileOrDirectory)
            }
        }
    }

    @Test func openingALinkAsADirectoryFailsUnlessFollowed() async throws {
        try await withScratchDirectory { scratch in
            let directory = scratch.path
            let handle = try DirectoryHandle.open(directory)
            try handle.makeDirectory("real", permissions: 0o700)
            try handle.makeSymbolicLink("link", target: "real")
            #expect(throws: FileError.self) { try handle.openDirectory("link") }
            #expect(try handle.openDirectory("link", followsLinks: true).status().isSameFile(as: try handle.status(of: "real")))
        }
    }

    @Test func extendedAttributesRoundTripWhereTheFileSystemKeepsThem() async throws {
        try await withScratchDirectory { scratch in
            let directory = scratch.path
            let handle = try DirectoryHandle.open(directory)
            try writeFile(directory.appending("a"), [1])
            try writeFile(directory.appending("b"), [2])
            let written = ExtendedAttributes([.init(name: Array("user.note".utf8), value: [0, 1, 255])])
            let refused = written.write(to: "a", in: handle)
            try #require(refused.isEmpty, "this file system refuses user.* attributes: \(refused.map(\.1))")
            let read = try ExtendedAttributes.read(of: "a", in: handle)
            #expect(read.attributes.contains(written.attributes[0]))
            #expect(read.write(to: "b", in: handle).isEmpty)
            #expect(try ExtendedAttributes.read(of: "b", in: handle).attributes.contains(written.attributes[0]))
        }
    }
}
