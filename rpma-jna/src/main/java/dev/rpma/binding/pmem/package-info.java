/**
 * Persistent memory that no file system maps: a device DAX, through libpmem.
 */
@NullMarked
package dev.rpma.binding.pmem;

import org.jspecify.annotations.NullMarked;
