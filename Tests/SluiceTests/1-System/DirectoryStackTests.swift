#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@testable import Sluice
import SluiceTestSupport
import Testing

/// A chain of directories with a bounded count of open descriptors, reopened through `..`
/// and checked by device and inode.
@Suite struct DirectoryStackTests {
    @Test func holdsAtMostTheBoundAndReopensParentsOnTheWayUp() async throws {
        try await withScratchDirectory { scratch in
            let directory = scratch.path
            let root = try DirectoryHandle.open(directory)
            var stack = try DirectoryStack(root: root, maximumOpen: 4)
            for level in 0..<40 {
                let name = Pathname("d\(level)")
                try stack.top.makeDirectory(name, permissions: 0o700)
                try stack.push(try stack.top.openDirectory(name), name: name)
                #expect(stack.openCount <= 4)
            }
            #expect(stack.depth == 40)
            try writeFile(directory.appending("marker"), [1])
            while stack.depth > 0 {
                try stack.pop()
                #expect(stack.openCount <= 4)
            }
            #expect(try stack.top.status(of: "marker").size == 1)
        }
    }

    @Test func aParentMovedWhileClosedIsFoundByNameAndAReplacedOneIsReported() async throws {
        try await withScratchDirectory { scratch in
            let directory = scratch.path
            let root = try DirectoryHandle.open(directory)
            var stack = try DirectoryStack(root: root, maximumOpen: 2)
            for name in ["a", "b", "c"] as [Pathname] {
                try stack.top.makeDirectory(name, permissions: 0o700)
                try stack.push(try stack.top.openDirectory(name), name: name)
            }
            // c moves out of b: its ".." is no longer b, so b is found again from the root by name.
            #expect(rename(directory.appending("a/b/c").description, directory.appending("c").description) == 0)
            try stack.pop()
            #expect(stack.depth == 2)
            for name in ["c2", "d"] as [Pathname] {
                try stack.top.makeDirectory(name, permissions: 0o700)
                try stack.push(try stack.top.openDirectory(name), name: name)
            }
            // c2 is closed; d moves out and another directory takes c2's name: neither d's ".."
            // nor the name leads to the c2 left.
            #expect(rename(directory.appending("a/b/c2/d").description, directory.appending("d").description) == 0)
            #expect(rename(directory.appending("a/b/c2").description, directory.appending("old").description) == 0)
            #expect(mkdir(directory.appending("a/b/c2").description, 0o700) == 0)
            #expect(throws: FileError.self) { try stack.pop() }
        }
    }
}
