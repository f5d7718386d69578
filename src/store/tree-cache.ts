import { GitTreeReader } from './git-reader';
import type { ObjectStore } from './objects';

const BLOB_SIZE_CACHE_LIMIT = 100_000;
const COMMIT_TREE_CACHE_LIMIT = 10_000;

/**
 * What a store remembers of immutable objects between calls: the root tree of each commit (HEAD's tree is
 * needed on every call) and the sizes of blobs its readers have looked at. Both are plain bounded maps,
 * cleared wholesale when full and when redaction rewrites history.
 */
export class TreeCache {
  private readonly blobSizes = new Map<string, number>();
  private readonly commitTrees = new Map<string, string>();

  constructor(private readonly objects: ObjectStore) {}

  async commitTree(commit: string): Promise<string> {
    let tree = this.commitTrees.get(commit);
    if (tree === undefined) {
      tree = (await this.objects.readCommit(commit)).commit.tree;
      this.remember(commit, tree);
    }
    return tree;
  }

  remember(commit: string, tree: string): void {
    if (this.commitTrees.size >= COMMIT_TREE_CACHE_LIMIT) this.commitTrees.clear();
    this.commitTrees.set(commit, tree);
  }

  /** The contract's reader over the memory in a root tree. */
  readerAt(tree: string): GitTreeReader {
    if (this.blobSizes.size > BLOB_SIZE_CACHE_LIMIT) this.blobSizes.clear();
    return new GitTreeReader(this.objects, tree, this.blobSizes);
  }

  clear(): void {
    this.commitTrees.clear();
    this.blobSizes.clear();
  }
}
