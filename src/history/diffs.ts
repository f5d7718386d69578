/**
 * A commit's memory files and their diffs, as every surface shows them: which files a commit changed
 * (renames paired), their texts, unified patches, and the line counts the history index records when a
 * commit is written (bounded: a pair of versions too different to diff within DIFF_MAX_EDIT_LENGTH lines
 * counts 0/0, so that no count costs minutes). The implementations belong to the store, which keeps the
 * index; this is where the edges find them.
 */
export {
  blobText,
  fileDiffs,
  isMemoryFile,
  oneSidedPatch,
  unifiedDiff,
  unifiedTextDiff,
  unifiedTextDiffWithin,
} from '../store/history-index/file-diffs';
export type { FileDiff } from '../store/history-index/file-diffs';
export { beyondEditLength, DIFF_CONTEXT_LINES, DIFF_MAX_EDIT_LENGTH, lineChangeCounts, splitLines, trimCommonLines } from '../store/history-index/line-stats';
export type { LineCounts } from '../store/history-index/line-stats';
export { commitLineCounts } from '../store/history-index/facts';
export type { FileFact } from '../store/history-index/facts';
